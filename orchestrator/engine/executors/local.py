"""The in-process executor: runs in plan order, in this process. For tests and debugging, and,
with ``executor.concurrency`` or an ``async def`` runner, many runs at once on an event loop in
this process (API-bound runners need no Ray at all).
"""

from __future__ import annotations

import queue
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from typing import NamedTuple

from counterfact.orchestrator.engine.calling.arun import RunCore
from counterfact.orchestrator.engine.calling.loops import LoopThread, process_loop
from counterfact.orchestrator.engine.calling.loopwatch import blocked, blocked_after, blocked_record
from counterfact.orchestrator.engine.calling.worker import (
    NO_RETRY,
    RetryPolicy,
    execute_run,
    failed_record,
)
from counterfact.orchestrator.engine.executors.base import Executor, SharedSlots
from counterfact.orchestrator.engine.executors.feed import RunFeed, as_feed
from counterfact.orchestrator.engine.executors.pooling import PoolSettings
from counterfact.orchestrator.engine.loading.loader import RunnerRef, resolve_runner
from counterfact.orchestrator.engine.pacing.allowance import WorkerSlots
from counterfact.orchestrator.engine.pacing.throttle import Allowance, Throttle, ThrottleNow
from counterfact.probes.runner import RunContext
from counterfact.records.runs import RunRecord

LOCAL_NODE = "local"
"""The ``node`` of runs executed in-process."""

_POLL_S = 0.1


class InFlight(NamedTuple):
    """A run submitted to the loop: its context and when it was submitted."""

    ctx: RunContext
    started: float


class LocalExecutor(Executor):
    """Runs every context in-process: in order, or overlapping (see :class:`PoolSettings`)."""

    def __init__(
        self,
        policy: RetryPolicy = NO_RETRY,
        pool: PoolSettings | None = None,
        timeout_s: float | None = None,
    ) -> None:
        super().__init__()
        self.policy = policy
        self.pool = pool or PoolSettings()
        self.timeout_s = timeout_s
        self.throttle: Throttle | None = None
        """The rate controller; set before the first run to share one with other executors."""
        self.share: tuple[int, int] = (0, 1)
        """(index, of how many): this executor's part of a shared throttle's limit (``blame
        DIR``'s calls each take one part, as Ray's workers do)."""
        self._shared: SharedSlots | None = None
        """The overlapping runs' slots and loop (kept after the runs: judging comes later)."""

    def run(
        self, runner: RunnerRef, contexts: Sequence[RunContext] | RunFeed
    ) -> Iterator[RunRecord]:
        """Run each context in this process; stop early when asked."""
        feed = as_feed(contexts)
        concurrency = self.pool.overlapping(runner, 1)
        if concurrency is not None:
            yield from self._overlapping(runner, feed, concurrency)
            return
        fn = resolve_runner(runner)
        while not self.stop_requested:
            feed.top_up(1)
            taken = feed.take(1)
            if not taken:
                return
            yield execute_run(fn, taken[0], self.policy, LOCAL_NODE)
        feed.close()

    def throttle_summary(self) -> dict[str, object] | None:
        """How the concurrency limit moved (None when runs did not overlap)."""
        return None if self.throttle is None else self.throttle.summary()

    def throttle_now(self) -> ThrottleNow | None:
        """The throttle's limit and refusals, read in place (None when runs did not overlap)."""
        return None if self.throttle is None else self.throttle.now()

    def shared_slots(self) -> SharedSlots | None:
        """The overlapping runs' slots on the process loop (None before runs overlapped, or
        when that loop was given up).
        """
        shared = self._shared
        return shared if shared is not None and shared.loop.alive else None

    def _core(self, runner: RunnerRef, throttle: Throttle) -> RunCore:
        """A core for one event loop (its slots' waits belong to that loop)."""

        async def link(refused: int, served: int, stale: int) -> Allowance:
            return throttle.report(refused, served, stale)

        start = Allowance(throttle.limit, throttle.per_minute, throttle.epoch)
        return RunCore(
            resolve_runner(runner),
            WorkerSlots(link, start, *self.share),
            self.policy,
            timeout_s=self.timeout_s,
            node=LOCAL_NODE,
        )

    def _overlapping(
        self, runner: RunnerRef, feed: RunFeed, concurrency: int
    ) -> Iterator[RunRecord]:
        if self.throttle is None:
            self.throttle = Throttle(concurrency, self.pool.per_minute)
        core = self._core(runner, self.throttle)
        loop = process_loop()  # one per process: clients the runner caches stay usable
        self._shared = SharedSlots(core.slots, loop, self.throttle)
        after_s = blocked_after(self.timeout_s)
        # queue.Queue, not SimpleQueue: CPython 3.11's SimpleQueue.get(timeout) waits forever when a
        # signal handler (the graceful stop's, logging on a loaded machine) outlasts the timeout
        finished: queue.Queue[Future[RunRecord]] = queue.Queue()
        running: dict[Future[RunRecord], InFlight] = {}
        try:
            while not self.stop_requested:
                room = concurrency - len(running)
                if room > 0:
                    feed.top_up(room)
                    for ctx in feed.take(room):
                        fut = loop.submit(core.run(ctx))
                        running[fut] = InFlight(ctx, time.perf_counter())
                        fut.add_done_callback(finished.put)
                if not running:
                    return
                try:
                    fut = finished.get(timeout=_POLL_S)
                except queue.Empty:
                    if blocked(loop, after_s):  # a runner holds the loop: give it up
                        yield from self._given_up(loop, core, running)
                        loop, core = process_loop(), self._core(runner, self.throttle)
                        self._shared = SharedSlots(core.slots, loop, self.throttle)
                    continue
                yield from _records(fut, finished, running)
            feed.close()  # stopping: runs already finished are recorded, the rest cancelled
            core.stop()
            for fut in list(running):
                if not fut.done():
                    fut.cancel()
            yield from _drained(finished, running)
        finally:
            core.stop()
            for fut in running:
                fut.cancel()

    def _given_up(
        self,
        loop: LoopThread,
        core: RunCore,
        running: dict[Future[RunRecord], InFlight],
    ) -> Iterator[RunRecord]:
        """Record every run on ``loop`` as failed (a runner blocked it) and abandon it."""
        culprit = core.blocking(loop.loop)
        now = time.perf_counter()
        given_up = list(running.values())
        running.clear()  # their futures, if the loop ever turns again, are not recorded
        loop.abandon()
        for ctx, started in given_up:
            yield blocked_record(ctx, culprit, self.timeout_s, now - started, LOCAL_NODE)


def _drained(
    finished: queue.Queue[Future[RunRecord]], running: dict[Future[RunRecord], InFlight]
) -> Iterator[RunRecord]:
    """The records of runs that finished before the stop (cancelled ones are skipped)."""
    try:
        first = finished.get_nowait()
    except queue.Empty:
        return
    yield from _records(first, finished, running)


def _records(
    first: Future[RunRecord],
    finished: queue.Queue[Future[RunRecord]],
    running: dict[Future[RunRecord], InFlight],
) -> Iterator[RunRecord]:
    """The record of ``first`` and of every other run finished meanwhile (a run no longer in
    ``running``, given up with its loop, is not recorded again).
    """
    fut: Future[RunRecord] | None = first
    while fut is not None:
        run = running.pop(fut, None)
        if run is not None and not fut.cancelled():  # cancelled: stopped, not recorded
            exc = fut.exception()
            if exc is None:
                yield fut.result()
            else:  # the engine's own error around a run: still one recorded run
                yield failed_record(run.ctx, type(exc).__name__, str(exc), 0.0, LOCAL_NODE)
        try:
            fut = finished.get_nowait()
        except queue.Empty:
            fut = None
