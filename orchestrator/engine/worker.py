"""Execute runs: call the runner, time it, check its return, and never let one run end a sweep."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from counterfact.orchestrator.engine.loader import RunnerRef, resolve_runner
from counterfact.probes.ablation import claiming, unclaimed
from counterfact.probes.records import RunError, RunRecord
from counterfact.probes.runner import RunContext, coerce_result


def now_iso() -> str:
    """The current UTC time, ISO 8601."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


TRACEBACK_MAX = 4096
"""Characters of traceback kept per failed run (the last frames)."""


def short_traceback(exc: BaseException) -> str:
    """The traceback of ``exc``, cut to its last :data:`TRACEBACK_MAX` characters at a line."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    if len(text) <= TRACEBACK_MAX:
        return text
    tail = text[-(TRACEBACK_MAX - 40) :]
    return "... (earlier frames cut)\n" + tail[tail.find("\n") + 1 :]


def failed_record(
    ctx: RunContext,
    error_type: str,
    message: str,
    duration: float,
    node: str | None = None,
    trace: str | None = None,
) -> RunRecord:
    """A record for a run that produced no result."""
    return RunRecord(
        scenario=ctx.scenario.id,
        arm=ctx.arm.id,
        seed=ctx.seed,
        output=None,
        manifest=None,
        cost=None,
        error=RunError(type=error_type, message=message, traceback=trace),
        duration_s=duration,
        finished_at=now_iso(),
        node=node,
    )


@dataclass(frozen=True)
class RetryPolicy:
    """Which runner exceptions are retried, and how often."""

    retries: int = 0
    retry_on: frozenset[str] = frozenset()

    def allows(self, exc: BaseException, attempt: int) -> bool:
        """Retry after ``attempt`` attempts when the exception's class (or a base) is listed."""
        names = {cls.__name__ for cls in type(exc).__mro__}
        return attempt <= self.retries and bool(names & self.retry_on)


NO_RETRY = RetryPolicy()


def execute_run(
    runner: Callable[..., Any],
    ctx: RunContext,
    policy: RetryPolicy = NO_RETRY,
    node: str | None = None,
) -> RunRecord:
    """Run once (plus allowed retries); an exception or broken return becomes ``error``."""
    attempt = 0
    while True:
        attempt += 1
        start = time.perf_counter()
        try:
            with claiming() as claimed:
                result = coerce_result(runner(ctx))
            problem = unclaimed(ctx.arm, claimed)
            if problem is not None:
                elapsed = time.perf_counter() - start
                record = failed_record(ctx, "AblationNotApplied", problem, elapsed, node)
                return record.model_copy(update={"attempts": attempt})
            break
        except (Exception, SystemExit) as exc:
            if policy.allows(exc, attempt):
                continue
            elapsed = time.perf_counter() - start
            trace = short_traceback(exc)
            record = failed_record(ctx, type(exc).__name__, str(exc), elapsed, node, trace)
            return record.model_copy(update={"attempts": attempt})
    try:
        return RunRecord(
            scenario=ctx.scenario.id,
            arm=ctx.arm.id,
            seed=ctx.seed,
            output=result.output,
            manifest=dict(result.manifest) if result.manifest is not None else None,
            cost=dict(result.cost) if result.cost is not None else None,
            error=None,
            duration_s=time.perf_counter() - start,
            finished_at=now_iso(),
            attempts=attempt,
            node=node,
        )
    except ValueError as exc:  # pydantic refused what coerce_result let through: still one run
        message = f"runner result cannot be recorded: {exc}".splitlines()[0]
        elapsed = time.perf_counter() - start
        record = failed_record(ctx, "RunnerReturnError", message, elapsed, node)
        return record.model_copy(update={"attempts": attempt})


def execute_batch(
    runner: RunnerRef,
    contexts: Sequence[RunContext],
    policy: RetryPolicy = NO_RETRY,
    node: str | None = None,
) -> list[RunRecord]:
    """Run a batch in order in this process (the unit of work a Ray task carries)."""
    fn = resolve_runner(runner)
    return [execute_run(fn, ctx, policy, node) for ctx in contexts]
