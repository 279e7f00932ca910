"""Execute runs: call the runner, time it, check its return, and never let one run end a sweep."""

from __future__ import annotations

import inspect
import random
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from counterfact.defaults import MAX_RATE_LIMIT_WAIT_S
from counterfact.orchestrator.engine.calling.aborting import aborting, graceful_active
from counterfact.orchestrator.engine.calling.loopguard import Raised, guarded
from counterfact.orchestrator.engine.calling.loops import process_loop
from counterfact.orchestrator.engine.pacing.ratelimits import full_jitter, refusal_of, wait_for
from counterfact.probes.ablation import claiming, unclaimed
from counterfact.probes.runner import RunContext, RunResult, coerce_result
from counterfact.records.runs import RunError, RunRecord


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


def _runner_seed(ctx: RunContext) -> int | None:
    """The seed the runner got, recorded only when it is not the seed index."""
    return ctx.seed + ctx.arm.seed_offset if ctx.arm.seed_offset else None


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
        runner_seed=_runner_seed(ctx),
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
    """Which runner exceptions are retried, how often, and how long a rate-limited run may wait."""

    retries: int = 0
    retry_on: frozenset[str] = frozenset()
    max_wait_s: float = MAX_RATE_LIMIT_WAIT_S
    """Seconds one run may spend waiting on rate limits in all; past it, it fails with the error
    it last raised (an API that never lets it through must not hang the sweep)."""

    def allows(self, exc: BaseException, attempt: int) -> bool:
        """Retry after ``attempt`` attempts when the exception's class (or a base) is listed."""
        names = {cls.__name__ for cls in type(exc).__mro__}
        return attempt <= self.retries and bool(names & self.retry_on)


NO_RETRY = RetryPolicy()


RETRY_BASE_S = 0.05
"""First backoff ceiling of a ``retry_on`` retry (doubled per retry, capped at 30 s)."""


@dataclass
class Attempts:
    """One run's tries so far: runner calls, rate-limit refusals and the time they cost."""

    policy: RetryPolicy
    rng: random.Random | None = None
    """Draws the jitter of a wait; made when the first wait is drawn (``random.Random()`` seeds
    itself from the OS, which cost more than an instant run, and almost no run ever waits)."""
    calls: int = 0
    refused: int = 0
    waited_s: float = 0.0
    began: float | None = None
    """When the latest call began (``time.perf_counter``); None before the first."""

    def _random(self) -> random.Random:
        if self.rng is None:
            self.rng = random.Random()
        return self.rng

    def after(self, exc: BaseException) -> float | None:
        """Seconds to wait before trying again after ``exc``, or None: record it as failed.

        A rate limit waits its ``Retry-After`` (else backoff) and is not an attempt; a listed
        exception is retried after an exponential backoff with full jitter.
        """
        refusal = refusal_of(exc)
        if refusal is not None:
            self.calls -= 1  # a refused call is not an attempt
            self.refused += 1
            wait = wait_for(refusal, self.refused, self._random())
            if self.waited_s + wait > self.policy.max_wait_s:
                return None
            self.waited_s += wait
            return wait
        if self.policy.allows(exc, self.calls):
            return full_jitter(self.calls, self._random(), base=RETRY_BASE_S)
        return None

    def stamp(self, record: RunRecord) -> RunRecord:
        """``record`` with the counts of this run's tries (unchanged for one clean call: the
        common case costs no copy).
        """
        if self.calls <= 1 and not self.refused:
            return record
        update: dict[str, float] = {"attempts": max(self.calls, 1)}
        if self.refused:
            update |= {"rate_limited": self.refused, "rate_limited_s": round(self.waited_s, 3)}
        return record.model_copy(update=update)


def result_record(
    ctx: RunContext, result: RunResult, claimed: set[str], elapsed: float, node: str | None
) -> RunRecord:
    """The record of a call that returned: success, or the arm's ablations left unapplied."""
    problem = unclaimed(ctx.arm, claimed)
    if problem is not None:
        return failed_record(ctx, "AblationNotApplied", problem, elapsed, node)
    try:
        return RunRecord(
            scenario=ctx.scenario.id,
            arm=ctx.arm.id,
            seed=ctx.seed,
            runner_seed=_runner_seed(ctx),
            output=result.output,
            manifest=dict(result.manifest) if result.manifest is not None else None,
            cost=dict(result.cost) if result.cost is not None else None,
            error=None,
            duration_s=elapsed,
            finished_at=now_iso(),
            node=node,
        )
    except ValueError as exc:  # pydantic refused what coerce_result let through: still one run
        message = f"runner result cannot be recorded: {exc}".splitlines()[0]
        return failed_record(ctx, "RunnerReturnError", message, elapsed, node)


def error_record(
    ctx: RunContext, exc: BaseException, elapsed: float, node: str | None
) -> RunRecord:
    """The record of a call that raised (a rate limit that waited too long included)."""
    message = str(exc)
    if refusal_of(exc) is not None:
        message = f"still rate-limited after waiting the most allowed (max_wait_s): {message}"
    trace = short_traceback(exc)
    return failed_record(ctx, type(exc).__name__, message, elapsed, node, trace)


def call_sync(runner: Callable[..., Any], ctx: RunContext) -> tuple[RunResult, set[str]]:
    """Call the runner in this thread; an ``async def`` runner's coroutine runs on the process's
    loop (:func:`~counterfact.orchestrator.engine.calling.loops.process_loop`) while this thread
    waits. Whatever the coroutine raises is raised here, in this thread, never on the loop.
    """
    with claiming() as claimed:
        value = runner(ctx.for_runner())
        if inspect.isawaitable(value):
            awaitable = value
            value = process_loop().run(guarded(lambda: awaitable))
            if isinstance(value, Raised):
                raise value.exc
        return coerce_result(value), claimed


def users_abort(exc: BaseException, *, worker: bool) -> bool:
    """True when ``exc`` is the user's interrupt, not the runner's own ``KeyboardInterrupt``.

    In the driver, under the graceful stop, only the interrupt its handler raises (the second
    Ctrl-C or signal) is the user's; without one (``validate --smoke``), any interrupt on the
    main thread may be a Ctrl-C. A ``worker`` process (Ray's) gets no Ctrl-C: Ray starts its
    workers in a process group of their own, and counterfact cancels a task only by killing it.
    """
    if not isinstance(exc, KeyboardInterrupt) or worker:
        return False
    if aborting():
        return True
    return not graceful_active() and threading.current_thread() is threading.main_thread()


def execute_run(
    runner: Callable[..., Any],
    ctx: RunContext,
    policy: RetryPolicy = NO_RETRY,
    node: str | None = None,
    rng: random.Random | None = None,
    *,
    worker: bool = False,
) -> RunRecord:
    """Run once (plus allowed retries and rate-limit waits); an exception or broken return
    becomes ``error``. Waits block this thread (one run per worker on this path).

    Anything the runner raises — ``SystemExit``, ``KeyboardInterrupt``, ``GeneratorExit``, other
    ``BaseException`` — is that run's failure, except the user's own interrupt
    (:func:`users_abort`; ``worker``: this is a worker process, which gets none).
    """
    tries = Attempts(policy, rng)
    while True:
        tries.calls += 1
        start = time.perf_counter()
        try:
            result, claimed = call_sync(runner, ctx)
        except BaseException as exc:
            if users_abort(exc, worker=worker):
                raise
            wait = tries.after(exc)
            if wait is None:
                return tries.stamp(error_record(ctx, exc, time.perf_counter() - start, node))
            time.sleep(wait)
            continue
        return tries.stamp(result_record(ctx, result, claimed, time.perf_counter() - start, node))
