"""Execute runs: call the runner, time it, check its return, and never let one run end a sweep."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any

from counterfact.orchestrator.imports import RunnerRef, resolve_runner
from counterfact.probes.records import RunError, RunRecord
from counterfact.probes.runner import RunContext, coerce_result


def now_iso() -> str:
    """The current UTC time, ISO 8601."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def failed_record(ctx: RunContext, error_type: str, message: str, duration: float) -> RunRecord:
    """A record for a run that produced no result."""
    return RunRecord(
        scenario=ctx.scenario.id,
        arm=ctx.arm.id,
        seed=ctx.seed,
        output=None,
        manifest=None,
        cost=None,
        error=RunError(type=error_type, message=message),
        duration_s=duration,
        finished_at=now_iso(),
    )


def execute_run(runner: Callable[..., Any], ctx: RunContext) -> RunRecord:
    """Run once; an exception (or a broken return value) becomes the record's ``error``."""
    start = time.perf_counter()
    try:
        result = coerce_result(runner(ctx))
    except (Exception, SystemExit) as exc:
        return failed_record(ctx, type(exc).__name__, str(exc), time.perf_counter() - start)
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
    )


def execute_batch(runner: RunnerRef, contexts: Sequence[RunContext]) -> list[RunRecord]:
    """Run a batch in order in this process (the unit of work a Ray task carries)."""
    fn = resolve_runner(runner)
    return [execute_run(fn, ctx) for ctx in contexts]
