"""Many runs at once on one event loop: the worker side of ``executor.concurrency``.

An ``async def`` runner is awaited on the loop; a sync runner is called on a thread of its own
(a daemon thread per call: its waits on I/O overlap, the loop never blocks, a hung call never
keeps the process alive, and no call waits in a pool's queue). Each call takes one of the
worker's :class:`~counterfact.orchestrator.engine.pacing.allowance.WorkerSlots`, so the sweep's
throttle bounds what is in flight. A rate-limited call gives its slot back while it waits; a
``timeout_s``, counted from the moment the call starts, cancels an async call (the worker lives on)
and abandons a sync one (its thread cannot be stopped; its result is dropped). A run the engine
cancels — a stop, Ctrl-C — is not recorded: a resume runs it; a run cancelled by anything else is
recorded as ``RunCancelled``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import random
import threading
import time
from collections.abc import Callable
from typing import Any

from counterfact.exceptions import RunCancelled
from counterfact.orchestrator.engine.calling.loopguard import Raised, guard_loop, guarded
from counterfact.orchestrator.engine.calling.worker import (
    Attempts,
    RetryPolicy,
    call_sync,
    error_record,
    failed_record,
    result_record,
)
from counterfact.orchestrator.engine.pacing.allowance import WorkerSlots
from counterfact.orchestrator.engine.pacing.ratelimits import refusal_of
from counterfact.probes.ablation import claiming
from counterfact.probes.runner import RunContext, RunResult, coerce_result
from counterfact.records.runs import RunRecord

FOREIGN_CANCEL = (
    "cancelled by code other than counterfact's: a runner that cancels tasks it did not start "
    "(asyncio.all_tasks()) ends the runs beside it"
)
"""The error message of a run cancelled while the engine was not stopping."""

Called = tuple[RunResult, set[str]] | Raised
"""A runner call's outcome: its result and the ablations it claimed, or what it raised."""


def _on_own_thread(runner: Callable[..., Any], ctx: RunContext) -> asyncio.Future[Called]:
    """Call a sync runner on a new daemon thread; its outcome lands in the returned future
    (what it raised as a :class:`Raised` value: an interrupt must not reach the loop).
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Called] = loop.create_future()

    def settle(outcome: Called) -> None:
        if not future.done():  # else abandoned: timed out or stopped
            future.set_result(outcome)

    def work() -> None:
        outcome: Called
        try:
            outcome = call_sync(runner, ctx)
        except BaseException as exc:  # handed to the loop, which records it
            outcome = Raised(exc)
        with contextlib.suppress(RuntimeError):  # the loop is gone: the run was abandoned
            loop.call_soon_threadsafe(settle, outcome)

    threading.Thread(target=work, name="counterfact-run", daemon=True).start()
    return future


def is_async_runner(runner: object) -> bool:
    """True for an ``async def`` function, or an object whose ``__call__`` is one."""
    if inspect.iscoroutinefunction(runner):
        return True
    call = getattr(runner, "__call__", None)  # noqa: B004 - a class instance's method
    return inspect.iscoroutinefunction(call)


async def _call_async(runner: Callable[..., Any], ctx: RunContext) -> Called:
    with claiming() as claimed:
        value = await guarded(lambda: runner(ctx.for_runner()))
        if isinstance(value, Raised):
            return value
        return coerce_result(value), claimed


class RunCore:
    """Runs contexts on the running event loop, through ``slots``."""

    def __init__(
        self,
        runner: Callable[..., Any],
        slots: WorkerSlots,
        policy: RetryPolicy,
        *,
        timeout_s: float | None = None,
        node: str | None = None,
    ) -> None:
        self.runner = runner
        self.slots = slots
        self.policy = policy
        self.timeout_s = timeout_s
        self.node = node
        self.is_async = is_async_runner(runner)
        self._rng = random.Random()
        self.stopping = False
        """Set by :meth:`stop`: the engine is cancelling its runs."""
        self._calls: dict[asyncio.Future[Called], RunContext] = {}
        """Each runner call in flight (an ``async def`` runner's task), by its run."""

    def blocking(self, loop: asyncio.AbstractEventLoop) -> RunContext | None:
        """The run whose runner call is running on ``loop`` at this moment, if it is one of
        this core's; called from another thread, it names the run that blocks the loop.
        """
        task = asyncio.current_task(loop)
        return None if task is None else self._calls.get(task)

    async def _call(self, ctx: RunContext) -> Called | None:
        """The call's outcome, or None when ``timeout_s`` ran out (the call is then cancelled;
        a runner's own ``TimeoutError`` is its error, not ours).

        Raises:
            RunCancelled: the runner's call was cancelled from inside (not by us).
        """
        call: asyncio.Future[Called]
        if self.is_async:
            call = asyncio.ensure_future(_call_async(self.runner, ctx))
        else:
            call = _on_own_thread(self.runner, ctx)
        self._calls[call] = ctx
        try:
            done, _ = await asyncio.wait({call}, timeout=self.timeout_s)
        except asyncio.CancelledError:
            call.cancel()
            raise
        finally:
            del self._calls[call]
        if not done:
            call.cancel()
            return None
        if call.cancelled():
            msg = "the runner's call ended in asyncio.CancelledError that counterfact did not send"
            raise RunCancelled(msg)
        error = call.exception()  # an Exception only: what the runner raised is Raised
        return Raised(error) if error is not None else call.result()

    def stop(self) -> None:
        """From now on a cancelled run is the engine's stop: not recorded (a resume runs it)."""
        self.stopping = True

    async def run(self, ctx: RunContext) -> RunRecord:
        """One run to its record: retries and rate-limit waits included. Whatever the runner
        raises (any ``BaseException``) or does to the loop is this run's error, never the loop's;
        so is a cancellation the engine did not send (:meth:`stop` says when it sends one): a
        runner cancelling tasks it did not start must not leave runs unrecorded.
        """
        tries = Attempts(self.policy, self._rng)
        try:
            return await self._run(ctx, tries)
        except asyncio.CancelledError:
            if self.stopping:
                raise
            # timed like every record, from its latest call (not its slot waits), with its tries
            began = tries.began
            elapsed = 0.0 if began is None else time.perf_counter() - began
            record = failed_record(ctx, "RunCancelled", FOREIGN_CANCEL, elapsed, self.node)
            return tries.stamp(record)

    async def _run(self, ctx: RunContext, tries: Attempts) -> RunRecord:
        guard_loop(asyncio.get_running_loop())
        while True:
            epoch = await self.slots.acquire()
            tries.calls += 1
            tries.began = start = time.perf_counter()
            try:
                called = await self._call(ctx)
            except asyncio.CancelledError:
                self.slots.release()
                raise
            except Exception as exc:  # RunCancelled, or the engine's own: still this run's
                called = Raised(exc)
            elapsed = time.perf_counter() - start
            if isinstance(called, Raised):
                raised = called.exc
                refused = refusal_of(raised) is not None
                wait = tries.after(raised)
                self.slots.release(refused=refused, served=not refused, epoch=epoch)
                if wait is None:
                    return tries.stamp(error_record(ctx, raised, elapsed, self.node))
                await asyncio.sleep(wait)
                continue
            self.slots.release(served=True, epoch=epoch)
            if called is None:
                return tries.stamp(self._timed_out(ctx, elapsed))
            result, claimed = called
            return tries.stamp(result_record(ctx, result, claimed, elapsed, self.node))

    def _timed_out(self, ctx: RunContext, elapsed: float) -> RunRecord:
        how = "cancelled" if self.is_async else "abandoned (its thread cannot be stopped)"
        msg = f"run exceeded timeout_s={self.timeout_s:g} and was {how}"
        return failed_record(ctx, "RunTimeout", msg, elapsed, self.node)
