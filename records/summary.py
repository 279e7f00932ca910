"""Summary records: what ``summary.json`` holds (provenance, per-scenario facts, the pooled
tests, the roll-up, concurrency and budget), and the provenance every record kind carries.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field, model_validator

from counterfact.records.arms import ArmVerdictRecord
from counterfact.records.execution import ConcurrencyRecord, ExecutionRecord, lift_execution
from counterfact.records.parts import (
    Interval,
    SimilarityRecord,
    _Record,
    renamed_reading,
)
from counterfact.records.vocabulary import (
    Adjustment,
    Alternative,
    Decider,
    ExecutorChosen,
    Family,
    Pairing,
    StatisticalVerdict,
)

SUMMARY_SCHEMA_VERSION: Literal[10] = 10
"""2 added ``statistics`` and ``pooled``; 3 added ``sequential``; 4 added ``concurrency``,
``budget`` and status ``budget-exhausted``; 5 added ``cache_entries_rejected``; 6 added
``pooled[].effect``; 7 added ``arms`` (one verdict per challenger over the question set) and
``spend`` and ``runs_rate_limited``; 8 added ``spend.runs_cost_refused`` and ``spend.judge``,
``judges``, ``invocation_started_at``, ``invocations`` and ``active_s``, and ``pooled[].role``
and ``holds_if``; 9 added ``judges[].unavailable``, ``judges[].rate_limited`` and
``judges[].concurrency``; 10 added ``spend.judge_by_arm`` and ``judges[].pacing``, and moved
``status``, ``failure``, the run counts, ``concurrency``,
``budget``, ``spend`` and ``timings`` into ``execution`` (an
:class:`~counterfact.records.execution.ExecutionRecord`, the one bisection and blame records
embed too); older files still load."""


class PooledEffectRecord(Interval):
    """One challenger's flip-rate difference (arm minus baseline) pooled over its scenarios, with
    an interval that respects clustering by scenario, and whether the scenarios agree.
    """

    diff: float
    """Summed ``n10 - n01`` over summed pairs."""
    heterogeneity_p: float | None
    """Cochran's Q p-value over the scenarios' differences (null with one scenario)."""
    i_squared: float | None
    """Share of the spread between scenarios beyond chance (Higgins' I², 0 to 1)."""
    heterogeneous: bool
    """True when Q's p is below 0.05: the scenarios' effects disagree, and the pooled figure
    averages over different effects."""
    disagreeing: list[str]
    """Scenarios whose own effect stands out from the median scenario's (Bonferroni over the
    scenarios)."""


class PooledRecord(_Record):
    """One challenger tested across every scenario (rule 18): McNemar stratified by scenario
    (discordant counts summed), adjusted over the challengers (its own family).
    """

    arm: str
    scenarios: int
    n10: int
    n01: int
    pairs: int
    p_value: float
    p_adjusted: float
    secondary_reading: StatisticalVerdict
    """This secondary test's own reading (``role``), not a verdict: ``arms[]`` holds each
    challenger's verdict over the question set. ``statistical_verdict`` before schema 8 (read
    as this)."""
    method: str = "McNemar stratified by scenario"
    role: Literal["secondary"] = "secondary"
    """Not a verdict: the arm-level test over questions (``arms[]``) is the headline."""
    holds_if: str = (
        "every seed pair is independent of its scenario's other pairs (seeds that vary "
        "independently); when a scenario's seeds repeat each other it overstates the evidence"
    )
    """The assumption under which this test's p-value holds."""
    e_value: float | None = None
    """Sequential sweeps: the product of the challenger's stopped e-values over its scenarios
    (an e-value, the scenarios' runs being independent); ``p_value`` is ``min(1, 1/e_value)``."""
    effect: PooledEffectRecord | None = None
    """The pooled effect with its cluster-robust interval and heterogeneity (null in summaries
    before version 6, and when a scenario's test lacks ``n11``)."""

    @model_validator(mode="before")
    @classmethod
    def _older(cls, data: Any) -> Any:
        return renamed_reading(data)


class SequentialSummary(_Record):
    """A sequential sweep at a glance (``summary.json``)."""

    max_samples: int
    wave: int
    runs_at_max_samples: int
    """Runs a fixed sweep at ``max_samples`` would record: scenarios x arms x max_samples."""
    runs_recorded: int
    """Runs this sweep's records hold (seeds below ``max_samples``; run-ahead seeds included)."""
    runs_saved: int
    """``runs_at_max_samples - runs_recorded``."""
    runs_cancelled: int
    """Queued runs withdrawn when their arm was decided (this invocation)."""
    stopped: dict[str, int]
    """Challengers by why they stopped."""


class RollupRecord(_Record):
    """One challenger across every scenario of the sweep (``summary.json`` ``rollup``)."""

    arm: str
    scenarios: int
    verdicts: dict[str, int]
    """Scenarios by tier: ``{"confirmed": 2, "inconclusive": 1}``."""
    significant: int
    """Scenarios where its test was significant (after adjustment)."""
    tested: int
    """Scenarios where it had a test (not withheld, a reference to score against)."""
    withheld: int = 0
    """Scenarios where its test was withheld because the arm or the baseline did not take effect
    (manifests): left out of the family adjustment and the pooled test."""
    summary: str
    """The line the table prints: ``prompt=v2: confirmed on 2 of 2 scenarios; ...``."""


class StatisticsRecord(_Record):
    """The ``statistics`` settings a sweep was judged with."""

    alpha: float
    adjust: Adjustment
    family: Family
    pairing: Pairing
    decide: Decider = "tiers"
    """What decided each row's headline verdict (null in older files: the tiers)."""
    alternative: Alternative = "greater"
    """The direction every test looked in."""
    min_effect: float | None = None
    """The declared minimal flip-rate difference worth finding (``decide: test``)."""


class ReferenceRecord(_Record):
    """Where a scenario's reference came from (rule 4)."""

    from_: Literal["prior-run", "baseline-arm"] | None = Field(alias="from")
    """``prior-run`` when the scenario gave one; ``baseline-arm`` for the baseline's seed 0."""
    text: str | None
    """Null when the baseline's seed-0 run failed and there is no reference."""


class NullBandRecord(_Record):
    """The baseline's own spread (rule 5)."""

    floor: float
    degenerate: bool
    gates: bool
    similarity: SimilarityRecord


class ScenarioSummary(_Record):
    """Per-scenario facts of a sweep."""

    id: str
    reference: ReferenceRecord
    baseline: str
    baseline_stable: bool | None
    """Null when the baseline could not be scored."""
    null_band: NullBandRecord | None
    arms: list[str]
    """Arm order, baseline first."""


class Provenance(_Record):
    """Where a record came from: the resolved config, what the user passed, versions, times.
    Built once per record by the driver; ``summary.json`` and ``bisect.json`` carry its fields
    at their top level (each record kind is a ``Provenance``).
    """

    name: str
    """The sweep's name."""
    config: dict[str, Any]
    """The resolved configuration (after defaults and overrides)."""
    config_source: str | None
    """The config file the sweep came from; null for the Python API."""
    overrides: list[str]
    """``--set`` / flag overrides applied on top of the file, as given."""
    counterfact_version: str
    python_version: str | None = None
    """The Python that ran the driver (null in older records)."""
    ray_version: str | None = None
    """The installed Ray, when there is one (null in older records, or without Ray)."""
    started_at: str
    """When the sweep started (ISO 8601, UTC)."""
    finished_at: str
    """When this record was made (ISO 8601, UTC)."""


class JudgeRecord(_Record):
    """What a model judge (``comparator: {kind: judge}``) did, and its measured noise."""

    model: str
    """The judge model asked."""
    identity: str
    """``judge@sha256:...`` of its settings (model, endpoint, prompt, rubric, seed): the
    ``judge.jsonl`` lines that are its judgments."""
    judgments: int
    """Distinct (reference, output) pairs judged, this session's and read-back ones."""
    calls: int
    """Calls this session made (identical outputs and recorded judgments cost none)."""
    read_back: int
    """Judgments read back from ``judge.jsonl`` (a resume asks none of them again)."""
    not_verdicts: int
    """Replies that were not a verdict (their outputs are unscored, in doubt)."""
    recheck: float
    """The share of judgments asked twice."""
    rechecked: int
    """Judgments asked twice whose two replies were both verdicts."""
    disagreed: int
    """Of those, the ones whose second verdict differed from the first."""
    disagreement: float | None
    """``disagreed / rechecked``: the judge's self-disagreement rate (null when none)."""
    low: float | None
    """Its 95% Wilson interval's lower end (``scipy.stats.binomtest(...).proportion_ci``)."""
    high: float | None
    """Its upper end."""
    unavailable: int = 0
    """Calls this session the judge refused, or left unanswered through its retries (their
    outputs are unscored, ``judge-unavailable``; a resume asks them again)."""
    rate_limited: int = 0
    """Judge calls refused with HTTP 429 this session, each waited out and sent again."""
    concurrency: ConcurrencyRecord | None = None
    """How the judge's own allowed concurrency moved (its calls go through the same adaptive
    controller as the runs'); null when it made no call this session."""
    pacing: Literal["runs-slots", "own", "own-beside-runs"] | None = None
    """How its calls were paced this session: ``runs-slots``, in the runs' own slots (one
    limit, one per-minute bucket, one throttle for both: the runner's endpoint and key, runs
    overlapping in this process); ``own``, by its own limit (another endpoint or key, or a
    Python runner); ``own-beside-runs``, by its own limit although it calls the runs' endpoint
    with their key, because no runs' slots were there when it judged (every run read back or
    cached, or the runs' event loop given up): the two limits add up, and a 429 met by one
    slows only that one. On Ray the judge holds a part of the runs' limit from their throttle
    actor: ``runs-slots`` too. Null when it made no call, and in records written before it was
    kept."""


class ExecutorRecord(_Record):
    """Which executor ran the sweep, and why."""

    kind: str
    """The executor kind used: ``ray`` or ``local`` (in-process), or the class name of an
    executor the Python API was handed."""
    chosen: ExecutorChosen
    """Why that kind (see :data:`~counterfact.records.vocabulary.ExecutorChosen`)."""


class SweepSummary(Provenance):
    """``summary.json``: provenance and per-scenario facts of one sweep."""

    schema_version: Literal[1, 2, 3, 4, 5, 6, 7, 8, 9, 10] = SUMMARY_SCHEMA_VERSION
    execution: ExecutionRecord
    """What the session's runs came to (counts, concurrency, budget, spend, timings) and how
    it ended (``execution.status``); at the top level of files before version 10."""
    judges: list[JudgeRecord] | None = None
    """Each model judge the sweep's checks asked (``comparator: {kind: judge}``): its calls
    and its self-disagreement on rechecked judgments; null without one."""
    executor: ExecutorRecord | None = None
    """The executor the runs went to and why it was chosen; null in older files."""
    invocation_started_at: str | None = None
    """When the invocation that wrote this record started. ``started_at`` is the sweep's first
    start, kept across resumes, and ``finished_at`` this invocation's end. Null in older files
    (their ``started_at`` is the last invocation's)."""
    invocations: int = Field(default=1, ge=1)
    """How many invocations ran the sweep: the first and each resume of it."""
    active_s: float | None = Field(default=None, ge=0)
    """Seconds the invocations took together (each one's start to end, summed: not the gaps
    between a stop and its resume); null in older files."""
    scenarios: list[ScenarioSummary]
    statistics: StatisticsRecord | None = None
    """The statistics settings used (null in version-1 files)."""
    arms: list[ArmVerdictRecord] = Field(default_factory=list)
    """Per challenger, one verdict over every question (the headline; ``arms.jsonl`` holds the
    same records): the sign-flip test over questions, valid whether a question's seeds are
    independent or copies. Empty before version 7."""
    pooled: list[PooledRecord] = Field(default_factory=list)
    """Per challenger, one test across scenarios (rule 18); empty with a single scenario."""
    sequential: SequentialSummary | None = None
    """Sequential sweeps: the settings, how the arms stopped, and the runs saved."""
    rollup: list[RollupRecord] = Field(default_factory=list)
    """Each challenger across scenarios (every sweep; most useful with several scenarios)."""

    @model_validator(mode="before")
    @classmethod
    def _older(cls, data: Any) -> Any:
        return lift_execution(data)


def took_text(summary: SweepSummary) -> str | None:
    """How long the sweep took, in words (``1,624.0 s over 3 invocations; the last 0.3 s``), or
    None when an older record does not say.
    """
    if summary.active_s is None:
        return None
    if summary.invocations == 1:
        return f"{summary.active_s:,.1f} s"
    last = seconds_between(summary.invocation_started_at, summary.finished_at)
    tail = "" if last is None else f"; the last {last:,.1f} s"
    return f"{summary.active_s:,.1f} s over {summary.invocations} invocations{tail}"


def seconds_between(start: str | None, end: str) -> float | None:
    """Seconds from ``start`` to ``end`` (ISO 8601), or None when either cannot be read."""
    try:
        began = datetime.fromisoformat(start) if start is not None else None
        return None if began is None else (datetime.fromisoformat(end) - began).total_seconds()
    except (TypeError, ValueError):
        return None
