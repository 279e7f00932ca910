"""What ``report.html`` shows, as read from one run directory (the orchestrator fills it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from counterfact.records.bisect import BisectRecord
from counterfact.records.blame import BlameRecord
from counterfact.records.summary import SweepSummary
from counterfact.records.verdicts import VerdictRecord


@dataclass(frozen=True)
class FailedRun:
    """A failed run, as the report lists it."""

    scenario: str
    arm: str
    seed: int
    error: str


@dataclass(frozen=True)
class Output:
    """One of an arm's most common outputs on a scenario, with the seeds that gave it."""

    text: str
    """The text as shown (cut, with an ellipsis, when long)."""
    count: int
    seeds: tuple[int, ...]
    identity: str = ""
    """What tells it apart from other texts: a digest of the whole text (empty: ``text``)."""


@dataclass(frozen=True)
class ReportData:
    """Everything the page shows, read from one run directory."""

    title: str
    summary: SweepSummary | None = None
    rows: Sequence[VerdictRecord] = ()
    failed: Sequence[FailedRun] = ()
    failed_total: int = 0
    runs_recorded: int | None = None
    """Runs in ``runs.jsonl`` (read back ones included); None when not counted."""
    bisect: BisectRecord | None = None
    blame: BlameRecord | None = None
    """``blame.json``: the blamed call's parts, drawn with the culprits marked."""
    floors: dict[str, float] = field(default_factory=dict)
    """Null-band floor per scenario."""
    inputs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Each scenario's inputs (its question), from ``sweep.json``."""
    outputs: Mapping[tuple[str, str], Sequence[Output]] = field(default_factory=dict)
    """The most common outputs per (scenario, arm), from ``runs.jsonl``."""
    manifests: Mapping[tuple[str, str], Mapping[str, Sequence[Output]]] = field(
        default_factory=dict
    )
    """Per (scenario, arm), per manifest key, the most common values reported (JSON text), from
    ``runs.jsonl``: what the report compares between the baseline and each arm."""
    manifests_partial: frozenset[tuple[str, str]] = frozenset()
    """The (scenario, arm) pairs that reported more manifest keys than were tracked: a key
    missing there is untracked, not absent."""
    similarity_shown: bool = True
    """Draw per-seed similarity and the null band: a text-level comparator, or a similarity
    measure configured; an answer-level comparator's flips do not rest on them."""
