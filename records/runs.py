"""The record of one finished run, one line of ``runs.jsonl``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

RUN_SCHEMA_VERSION: Literal[6] = 6
"""2 added ``node``, ``infra_retries`` and ``infra_error``; 3 added ``error.traceback``; 4 added
``rate_limited`` and ``rate_limited_s``; 5 added ``text_escaped``; 6 added ``runner_seed``; older
lines still load."""


class RunError(BaseModel):
    """Why a run failed. Failed runs are recorded but are not samples."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: str
    """The exception class name (``RunnerReturnError`` for a broken return value)."""
    message: str
    """The exception message."""
    traceback: str | None = None
    """The traceback's last frames (at most 4 KB), where the run raised; null for failures that
    have none (a lost worker, a timeout)."""


class RunRecord(BaseModel):
    """One finished run of (scenario, arm, seed), successful or not."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1, 2, 3, 4, 5, 6] = RUN_SCHEMA_VERSION
    """Version of this record's layout."""
    scenario: str
    """Scenario id."""
    arm: str
    """Arm id."""
    seed: int
    """The seed index: runs of different arms pair by it. The seed the runner got, except on a
    ``placebo: fresh`` arm (``runner_seed``)."""
    runner_seed: int | None = None
    """``placebo: fresh`` arms only: the seed the runner got, from a range disjoint from every
    other arm's (``seed`` plus the arm's offset); null when it is ``seed``."""
    output: str | None
    """The runner's output; null when the run failed."""
    manifest: dict[str, Any] | None
    """What the run reported about its own configuration; null when it reported none."""
    cost: dict[str, float] | None
    """Cost numbers the run reported; null when it reported none."""
    error: RunError | None
    """Why the run failed; null for a successful run."""
    duration_s: float
    """Wall time of the runner call, in seconds."""
    finished_at: str
    """When the run finished, ISO 8601 in UTC."""
    attempts: int = 1
    """Runner calls this record took: 1, plus one per retry of a listed exception (``retry_on``).
    Infrastructure retries by Ray (a dead worker) are not counted here."""
    from_cache: bool = False
    """True when the result was read from the run cache (``cache_dir``) instead of running."""
    infra_retries: int = 0
    """Times the run's task was resubmitted because its worker or node died (Ray), before this
    record; not runner retries (``attempts``)."""
    infra_error: str | None = None
    """The error that lost the task last (``NodeDiedError``, ``WorkerCrashedError`` ...)."""
    rate_limited: int = 0
    """Times the API refused this run for now (HTTP 429 or ``counterfact.RateLimited``) and it
    waited and ran again; these are neither failures nor ``attempts``."""
    rate_limited_s: float = 0.0
    """Seconds this run spent waiting on rate limits (``Retry-After`` or backoff)."""
    text_escaped: bool = False
    """True when some text of the run (output, error, manifest) held characters UTF-8 cannot
    encode (lone surrogates, e.g. a file name that was not UTF-8): they are written as
    backslash escapes (the six characters ``\\udcff``), and the run was judged on the escaped
    text."""
    node: str | None = None
    """Where the run ran: the Ray node id, or ``local`` in-process. Null when unknown: records
    written before this field existed, and runs whose task was lost with its worker."""

    @property
    def ok(self) -> bool:
        """True when the run finished with an output and no error."""
        return self.error is None and self.output is not None
