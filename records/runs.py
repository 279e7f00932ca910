"""The record of one finished run, one line of ``runs.jsonl``."""

from __future__ import annotations

import math
from typing import Any, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

RUN_SCHEMA_VERSION: Literal[6] = 6
"""2 added ``node``, ``infra_retries`` and ``infra_error``; 3 added ``error.traceback``; 4 added
``rate_limited`` and ``rate_limited_s``; 5 added ``text_escaped``; 6 added ``runner_seed``; older
lines still load."""


MAX_RUN_COST: Final = 1e15
"""The most one run may report of a cost key: a million runs of it still sum to a finite total
(a reply whose usage said 1e308 tokens made every total, and the directory, unreadable). A runner
that reports more fails its run; a record on disk that holds more (written before this limit)
loads with that entry moved to ``cost_refused``."""


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
    """Cost numbers the run reported; null when it reported none. Never a number no run can
    spend (see ``cost_refused``)."""
    cost_refused: dict[str, str] | None = None
    """Cost entries a reader refused, as written (``"1e+308"``, ``"inf"``, ``"-5.0"``): not finite,
    negative, or over ``MAX_RUN_COST`` for one run. They count in no total, so one poisoned line
    cannot make its directory's totals, verdicts and report unreadable. Null when none was."""
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

    @model_validator(mode="before")
    @classmethod
    def _refuse_unspendable_cost(cls, data: Any) -> Any:
        """Move a cost entry no run can spend out of ``cost`` into ``cost_refused``."""
        if not isinstance(data, dict) or not isinstance(data.get("cost"), dict):
            return data
        kept: dict[str, Any] = {}
        refused: dict[str, str] = dict(data.get("cost_refused") or {})
        for key, value in data["cost"].items():
            if _spendable(value):
                kept[key] = value
            else:
                shown = repr(value) if isinstance(value, float) else str(value)
                refused[str(key)] = (
                    shown if len(shown) <= 40 else f"{shown[:20]}... ({len(shown)} digits)"
                )
        if not refused:
            return data
        return data | {"cost": kept or None, "cost_refused": refused}

    @model_serializer(mode="wrap")
    def _without_unset_refusals(self, handler: SerializerFunctionWrapHandler) -> Any:
        """``cost_refused`` is written only when it holds something: a line as schema 6 wrote it
        (a reader of an older version, which forbids unknown keys, still reads it).
        """
        data = handler(self)
        if isinstance(data, dict) and data.get("cost_refused", 0) is None:
            del data["cost_refused"]
        return data


def _spendable(value: Any) -> bool:
    """A number one run can have spent: finite, not negative, at most ``MAX_RUN_COST``; a value
    of another type is left for pydantic to refuse (a damaged record, not a poisoned one).
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return True
    if isinstance(value, int):  # compared as an int: a 400-digit one overflows math.isfinite
        return 0 <= value <= MAX_RUN_COST
    return math.isfinite(value) and 0 <= value <= MAX_RUN_COST
