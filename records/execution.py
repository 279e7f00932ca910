"""What running a sweep's or a search's runs came to: the :class:`ExecutionRecord` a session
closes into, embedded whole by ``summary.json``
(:class:`~counterfact.records.summary.SweepSummary`), ``bisect.json``
(:class:`~counterfact.records.bisect.BisectRecord`) and the blame records.

A new counter is one field here and one line where the session closes
(``orchestrator/drivers/session.py`` ``Session.close``): every record kind that embeds the
record carries it, and an older file, whose counters sat at its top level, still loads
(:func:`lift_execution`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from counterfact.records.parts import _Record

Status = Literal["complete", "interrupted", "failed", "budget-exhausted"]
"""How the work ended, as the records say it: ``interrupted`` (Ctrl-C or SIGTERM), ``failed``
(every run failed, or the runner evidently cannot work), ``budget-exhausted`` (the ``budget``
stopped scheduling), else ``complete``."""


class ConcurrencyRecord(_Record):
    """How the sweep's allowed concurrency moved (runs that overlapped: ``concurrency``, an
    ``async def`` runner, or ``rate_limit``).
    """

    configured: int
    """``executor.concurrency`` (or its default): the ceiling."""
    final: int
    """The limit when the sweep ended."""
    lowest: int
    """The lowest limit reached (the start, or a cut: x0.8 each, not below the last limit
    served cleanly when the refusals came from above it)."""
    cuts: int
    """Times the refusals said the API was full (back to back, or 20% of the recent calls) and
    the limit was cut; sporadic refusals are waited out without a cut."""
    refusals: int
    """Calls the API refused (HTTP 429 or ``RateLimited``); each waited and ran again."""
    requests_per_minute: float | None = None
    """``rate_limit.requests_per_minute``, when set."""
    moves: list[tuple[float, int, Literal["cut", "grow"]]] = Field(default_factory=list)
    """Each change: seconds since the first run, the new limit, and why (``grow``: served calls
    below the last good limit, one slot each, or a clean round beyond it)."""
    throttle_lost: bool = False
    """True when the throttle (a Ray actor) was lost mid-sweep: this is the last record read
    before the loss, so moves and refusals after it are missing."""
    start: int | None = None
    """The limit the sweep started at (slow start: half of ``configured``, at least 16); null
    in records written before it was kept (they started at ``configured``)."""
    last_good: int | None = None
    """The limit of the last clean round (as many calls served as the limit, no cut): what the
    limit grows back to fast after an outage; null when no round completed."""


class BudgetRecord(_Record):
    """The ``budget`` and what was spent against it."""

    limits: dict[str, float]
    """The configured limits per cost key."""
    spent: dict[str, float]
    """Recorded spend per cost key over every run of the directory (resumed ones included)."""
    exhausted: list[str] = Field(default_factory=list)
    """Cost keys whose limit stopped scheduling; empty when the sweep fit its budget."""
    runs_not_started: int | None = None
    """Planned runs left unstarted by the budget (null for a sequential sweep: no fixed plan)."""


class SpendRecord(_Record):
    """What the recorded runs reported costing (their ``cost``), summed."""

    total: dict[str, float]
    """Per cost key (``usd``, ``tokens`` ...), over every run of the directory."""
    by_arm: dict[str, dict[str, float]]
    """The same per arm."""
    runs_with_cost: int
    """Runs that reported a cost."""
    runs_cost_refused: int = 0
    """Runs whose record held a cost no run can spend (``RunRecord.cost_refused``: not finite,
    negative, or over ``MAX_RUN_COST``); those entries count in no total."""
    judge: dict[str, float] | None = None
    """What model judges (``comparator: {kind: judge}``) cost: ``calls``, ``tokens`` and
    ``usd`` (with a ``price``), over every judgment in the directory's ``judge.jsonl``; not in
    ``total`` (that is the runs')."""
    judge_by_arm: dict[str, dict[str, float]] | None = None
    """``judge`` per arm: each call charged to the arm whose output asked for it first (an
    output several arms gave is judged, and charged, once). Calls recorded before it was kept
    (``judge.jsonl`` lines without an arm: summary and bisect schema 9 and older, blame schema 1)
    have no arm and count in ``judge`` only."""


class TimingsRecord(_Record):
    """Where the sweep's wall-clock seconds went."""

    startup_s: float | None = None
    """From the executor's start (Ray started or joined, workers come up) until the first run
    started; null when nothing was executed (everything read back or cached)."""
    execution_s: float | None = None
    """From the first run started until the last record was in; null when nothing was
    executed."""
    judging_s: float | None = None
    """Judging the tallies and writing the records; null when the sweep stopped before it."""
    report_s: float | None = None
    """Rendering ``report.html``: the summary is written again once the report is out (null
    when no report was written, or before it was)."""


class ExecutionRecord(_Record):
    """What a session's runs came to: how many ran, were read back, came from the cache, waited
    on a rate limit or failed, how concurrency moved, what was spent, where the time went, and
    how the work ended.
    """

    status: Status = "complete"
    """``interrupted`` when Ctrl-C or SIGTERM stopped the work (a sweep then has no verdicts
    yet); ``failed`` when every run failed, or scheduling stopped because the runner evidently
    cannot work (``failure`` says why); ``budget-exhausted`` when the ``budget`` stopped
    scheduling (the verdicts judge the runs that fit; raise it and resume to continue)."""
    failure: str | None = None
    """Why the work failed, in words; null unless ``status`` is ``failed``."""
    runs_used: int = 0
    """Runner calls made by this invocation, retries included (runs read back or taken from the
    cache excluded)."""
    runs_reused: int = 0
    """Runs read back from this directory's ``runs.jsonl`` (a resume)."""
    runs_from_cache: int = 0
    """Runs taken from the run cache."""
    runs_rate_limited: int = 0
    """Runs of the directory (read back ones included) that an API refused at least once (HTTP
    429 or ``RateLimited``) and that waited and ran again. Not a reason for doubt: the wait
    changes when a run ran, not what it answered. One still refused after
    ``rate_limit.max_wait_s`` failed, and is also in ``runs_failed``. 0 in older files."""
    runs_failed: int = 0
    """Recorded runs (read back ones included) that failed."""
    cache_entries_rejected: int = 0
    """Run-cache entries found but not used: damaged, edited, not the run asked for, or not a
    regular file of at most 64 MiB (a FIFO, device or link is never read); their runs were
    executed and the entries rewritten."""
    torn_line_dropped: bool = False
    """A crash had cut the last line of ``runs.jsonl``; it was dropped on resume."""
    concurrency: ConcurrencyRecord | None = None
    """How the allowed concurrency moved; null when runs did not overlap."""
    budget: BudgetRecord | None = None
    """The spend budget; null without ``budget``."""
    spend: SpendRecord | None = None
    """What the runs reported costing, per arm and overall, and a model judge's calls under
    ``judge`` (null in older files)."""
    timings: TimingsRecord | None = None
    """Start-up, execution, judging and report seconds; null in older files."""


def lift_execution(data: Any) -> Any:
    """An older file's counters, which sat at the record's top level, moved into its
    ``execution`` (a model validator's ``before`` step; a newer file passes unchanged).
    """
    if not isinstance(data, dict) or "execution" in data:
        return data
    flat = {k: data[k] for k in ExecutionRecord.model_fields if k in data}
    rest = {k: v for k, v in data.items() if k not in flat}
    return rest | {"execution": flat}
