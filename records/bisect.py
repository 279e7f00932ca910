"""Bisection records: what ``bisect.json`` holds."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from counterfact.records.execution import ExecutionRecord, lift_execution
from counterfact.records.parts import DoubtRecord, SimilarityRecord, _Record
from counterfact.records.summary import JudgeRecord, Provenance, ReferenceRecord
from counterfact.records.vocabulary import (
    BisectReason,
    BisectVerdict,
    Standing,
)

BISECT_SCHEMA_VERSION: Literal[10] = 10
"""2 added ``decide``, ``confirmations`` and each probe's ``p_value``; 3 added ``status`` and
``failure``; 4 added ``search_complete``, ``culprit_checks``, ``unconfirmed_found``,
``standing`` and ``reasons``; 5 added ``runs_rate_limited`` and the reasons
``baseline-not-applied`` and ``baseline-facet-not-reported``; 6 added ``samples_needed`` and the
reason ``underpowered`` (``decide: test`` at too few samples to reach alpha), and each culprit
check's ``minimal_on_fresh``, ``fresh_probes`` and ``fresh_p_values`` (its 1-minimality
re-tested on fresh seeds); 7 added ``ranking_probes`` (``bisect.rank``'s pass); 8 added
``decide_asked`` and ``noise_seen`` (``bisect.decide: auto``, the new default); 9 added
``stop_early`` and each probe's ``decided_early`` (``bisect.stop_early``), ``spend`` and
``judges`` (a model judge's calls, cost and self-disagreement); 10 added ``spend.judge_by_arm``
(each probe arm's judge calls) and ``judges[].pacing``, and moved ``status``,
``failure``, ``runs_used``, ``runs_reused``, ``runs_rate_limited`` and ``spend`` into
``execution`` (the :class:`~counterfact.records.execution.ExecutionRecord` a sweep's summary
embeds too, with the counts a search did not record before); older files still load."""


class BisectProbeRecord(_Record):
    """One probe use of the culprit search."""

    ablated: list[str]
    """Ids ablated together, in set order; empty for the baseline probe."""
    samples: int
    flips: int
    flipped: bool
    """Majority rule; for the baseline probe, zero tolerance (any flip)."""
    similarity: SimilarityRecord | None
    cached: bool
    """Answered from the cache: no runs spent."""
    speculative: bool
    """Run ahead of need in speculative mode."""
    p_value: float | None = None
    """``decide: test``: the probe's paired test against the baseline probe."""
    n10: int | None = None
    """``decide: test``: seeds where the probe flipped and the baseline probe did not."""
    n01: int | None = None
    """``decide: test``: seeds where the baseline probe flipped and the probe did not."""
    decided_early: bool = False
    """``bisect.stop_early``: the probe stopped before its last seed because the seeds not
    drawn could not change its decision (``samples`` is then the seeds drawn, and ``p_value``
    is theirs); the decision is the one all the seeds would give. False in older files."""


class ConfirmationRecord(_Record):
    """``decide: test``: a culprit set re-tested on fresh seeds before it is claimed."""

    culprit: list[str]
    first_seed: int
    """The fresh seeds are ``first_seed..first_seed+samples-1``."""
    n10: int
    n01: int
    p_value: float
    alpha: float
    """``statistics.alpha / max_culprits``."""
    confirmed: bool


class CulpritCheckRecord(_Record):
    """A culprit set's 1-minimality check: the set probed without each of its suspects."""

    culprit: list[str]
    one_minimal: bool
    """True when every one-smaller set was probed and none flipped; false when the budget (or a
    Ctrl-C) stopped the check first."""
    probes: list[list[str]]
    """The one-smaller sets probed (none flipped)."""
    shrunk_from: list[str] | None = None
    """The set ddmin returned first, when leaving a suspect out still flipped and it was shrunk."""
    minimal_on_fresh: bool | None = None
    """``decide: test``: true when every one-smaller set, re-probed on the confirmation's fresh
    seeds, was decided and did not flip (paired test at ``statistics.alpha``); false when one
    flipped there (a suspect may be superfluous) or could not be decided; null when not
    re-tested (majority mode, no budget left, or an older file): then ``one_minimal`` rests on
    the search's own seeds only."""
    fresh_probes: list[list[str]] = Field(default_factory=list)
    """The one-smaller sets re-probed on the fresh seeds."""
    fresh_p_values: list[float] = Field(default_factory=list)
    """Each one's paired test against the fresh baseline probe (same order)."""


class BisectRecord(Provenance):
    """``bisect.json``: the culprit search and its evidence."""

    schema_version: Literal[1, 2, 3, 4, 5, 6, 7, 8, 9, 10] = BISECT_SCHEMA_VERSION
    execution: ExecutionRecord
    """What the search's runs came to and how it ended: ``execution.status`` is ``failed`` when
    every run failed or the runner evidently cannot work (``execution.failure``),
    ``interrupted`` after a Ctrl-C; at the top level of files before version 10."""
    decide: Literal["majority", "test"] = "majority"
    """How probes were decided (rule 10 majority, or rule 20 test)."""
    decide_asked: Literal["auto", "majority", "test"] | None = None
    """What ``bisect.decide`` asked; ``auto`` is decided by ``test`` when ``noise_seen`` is not
    empty, else by ``majority``. Null before schema 8."""
    noise_seen: list[list[str]] = Field(default_factory=list)
    """Probes (ablated ids) whose seeds split, some flipped and some held: the program's answers
    vary by seed. Under ``decide: majority`` that makes the result not sure
    (``noise-unmeasured``): the majority rule does not test a flip against that noise."""
    confirmations: list[ConfirmationRecord] = Field(default_factory=list)
    """``decide: test``: each culprit set's confirmation on fresh seeds."""
    scenario: str
    verdict: BisectVerdict
    """confirmed / not-reproducible / inconclusive."""
    reason: BisectReason
    samples_needed: int | None = None
    """Reason ``underpowered``: the fewest samples per probe at which a probe's paired test
    could reach ``statistics.alpha`` and a set's confirmation ``alpha / max_culprits``; null
    otherwise (and in older files)."""
    claim: str
    """The result in words; its first sentence states the standing."""
    standing: Standing = "not-assessed"
    """``sure`` / ``not-sure``, or ``not-assessed`` for a search that ended without an answer
    (inconclusive)."""
    reasons: list[DoubtRecord] = Field(default_factory=list)
    """One entry per kind of doubt about the result."""
    culprits: list[list[str]]
    """Minimal culprit sets, in discovery order; empty unless confirmed. A budget that runs out
    (or a Ctrl-C) after some sets were found keeps them, with ``search_complete`` false."""
    search_complete: bool = True
    """False when the search for further sets did not finish (budget, or interrupted): the sets
    in ``culprits`` stand, and more may exist."""
    culprit_checks: list[CulpritCheckRecord] = Field(default_factory=list)
    """Per culprit set (same order): whether it is 1-minimal and the probes that showed it."""
    unconfirmed_found: list[list[str]] = Field(default_factory=list)
    """``decide: test``: sets the search found but could not confirm on fresh seeds (budget or
    Ctrl-C); not claimed."""
    suspects: list[str]
    """The ranked suspects searched."""
    probes: list[BisectProbeRecord]
    """Probe uses in execution order, baseline first."""
    ranking_probes: int = 0
    """Probes ``bisect.rank`` (``loo``, ``surrogate``) spent ordering the suspects before the
    search; they count against ``max_probes`` but not in ``probes_executed``. 0 in older
    files."""
    probes_executed: int
    """Probes that ran (cached uses excluded); counts against max_probes."""
    speculative: bool
    stop_early: bool = False
    """``bisect.stop_early``: probes stopped drawing seeds once their decision was fixed
    (``probes[].decided_early``). False in older files."""
    speculative_unused: int
    """Probes run ahead whose result the search never needed."""
    max_probes: int
    max_culprits: int
    samples: int
    comparator: str
    reference: ReferenceRecord
    wall_time_s: float
    """Wall time of the search, Ray start-up excluded."""
    judges: list[JudgeRecord] | None = None
    """Each model judge (``--comparator judge``, ``comparator: {kind: judge}``): its calls this
    session, what was read back, and its self-disagreement with a Wilson interval; null
    without one (and before schema 9)."""

    @model_validator(mode="before")
    @classmethod
    def _older(cls, data: Any) -> Any:
        return lift_execution(data)
