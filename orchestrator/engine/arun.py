"""Many runs at once on one event loop: the worker side of ``executor.concurrency``.

An ``async def`` runner is awaited on the loop; a sync runner is called on a thread pool (its
waits on I/O overlap; the loop never blocks). Each call goes through the worker's
:class:`~.gate.Gate`, so the sweep's throttle bounds what is in flight. A rate-limited call gives
its slot back while it waits; a ``timeout_s`` cancels an async call (the worker lives on) and
abandons a sync one (its thread cannot be stopped; its result is dropped). A cancelled run — a
stop, Ctrl-C — is not recorded: a resume runs it.
"""

from __future__ import annotations

import asyncio
import inspect
import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from counterfact.orchestrator.engine.gate import Gate
from counterfact.orchestrator.engine.ratelimits import refusal_of
from counterfact.orchestrator.engine.worker import (
    Attempts,
    RetryPolicy,
    call_sync,
    error_record,
    failed_record,
    result_record,
)
from counterfact.probes.ablation import claiming
from counterfact.probes.records import RunRecord
from counterfact.probes.runner import RunContext, RunResult, coerce_result


def is_async_runner(runner: object) -> bool:
    """True for an ``async def`` function, or an object whose ``__call__`` is one."""
    if inspect.iscoroutinefunction(runner):
        return True
    call = getattr(runner, "__call__", None)  # noqa: B004 - a class instance's method
    return inspect.iscoroutinefunction(call)


async def _call_async(runner: Callable[..., Any], ctx: RunContext) -> tuple[RunResult, set[str]]:
    with claiming() as claimed:
        value = runner(ctx)
        if inspect.isawaitable(value):
            value = await value
        return coerce_result(value), claimed


class RunCore:
    """Runs contexts on the running event loop, through ``gate``."""

    def __init__(
        self,
        runner: Callable[..., Any],
        gate: Gate,
        policy: RetryPolicy,
        *,
        threads: int,
        timeout_s: float | None = None,
        node: str | None = None,
    ) -> None:
        self.runner = runner
        self.gate = gate
        self.policy = policy
        self.timeout_s = timeout_s
        self.node = node
        self.is_async = is_async_runner(runner)
        self._pool = None if self.is_async else ThreadPoolExecutor(max(1, threads), "cf-run")
        self._rng = random.Random()

    def close(self) -> None:
        """Let the thread pool's threads end (runs still on them finish unrecorded)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    async def _call(self, ctx: RunContext) -> tuple[RunResult, set[str]]:
        if self._pool is None:
            call = _call_async(self.runner, ctx)
        else:
            loop = asyncio.get_running_loop()
            call = loop.run_in_executor(self._pool, call_sync, self.runner, ctx)  # type: ignore[assignment]
        if self.timeout_s is None:
            return await call
        return await asyncio.wait_for(call, self.timeout_s)

    async def run(self, ctx: RunContext) -> RunRecord:
        """One run to its record: retries and rate-limit waits included."""
        tries = Attempts(self.policy, self._rng)
        while True:
            await self.gate.acquire()
            tries.calls += 1
            start = time.perf_counter()
            try:
                result, claimed = await self._call(ctx)
            except asyncio.TimeoutError:
                self.gate.release(served=True)
                return tries.stamp(self._timed_out(ctx, time.perf_counter() - start))
            except asyncio.CancelledError:
                self.gate.release()
                raise
            except (Exception, SystemExit) as exc:
                elapsed = time.perf_counter() - start
                refused = refusal_of(exc) is not None
                wait = tries.after(exc)
                self.gate.release(refused=refused, served=not refused)
                if wait is None:
                    return tries.stamp(error_record(ctx, exc, elapsed, self.node))
                await asyncio.sleep(wait)
                continue
            self.gate.release(served=True)
            elapsed = time.perf_counter() - start
            return tries.stamp(result_record(ctx, result, claimed, elapsed, self.node))

    def _timed_out(self, ctx: RunContext, elapsed: float) -> RunRecord:
        how = "cancelled" if self.is_async else "abandoned (its thread cannot be stopped)"
        msg = f"run exceeded timeout_s={self.timeout_s:g} and was {how}"
        return failed_record(ctx, "RunTimeout", msg, elapsed, self.node)
