"""The in-process executor: runs in plan order, in this process. For tests and debugging, and,
with ``executor.concurrency`` or an ``async def`` runner, many runs at once on an event loop in
this process (API-bound runners need no Ray at all).
"""

from __future__ import annotations

import queue
from collections.abc import Iterator, Sequence
from concurrent.futures import Future

from counterfact.orchestrator.engine.arun import RunCore
from counterfact.orchestrator.engine.executors.base import Executor
from counterfact.orchestrator.engine.executors.pooling import PoolSettings
from counterfact.orchestrator.engine.feed import RunFeed, as_feed
from counterfact.orchestrator.engine.gate import Gate
from counterfact.orchestrator.engine.loader import RunnerRef, resolve_runner
from counterfact.orchestrator.engine.loops import process_loop
from counterfact.orchestrator.engine.throttle import Allowance, Throttle, ThrottleNow
from counterfact.orchestrator.engine.worker import (
    NO_RETRY,
    RetryPolicy,
    execute_run,
    failed_record,
)
from counterfact.probes.records import RunRecord
from counterfact.probes.runner import RunContext

LOCAL_NODE = "local"
"""The ``node`` of runs executed in-process."""

_POLL_S = 0.1


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

    def _overlapping(
        self, runner: RunnerRef, feed: RunFeed, concurrency: int
    ) -> Iterator[RunRecord]:
        if self.throttle is None:
            self.throttle = Throttle(concurrency, self.pool.per_minute)
        throttle = self.throttle

        async def link(refused: int, served: int, stale: int) -> Allowance:
            return throttle.report(refused, served, stale)

        start = Allowance(throttle.limit, throttle.per_minute, throttle.epoch)
        core = RunCore(
            resolve_runner(runner),
            Gate(link, start),
            self.policy,
            timeout_s=self.timeout_s,
            node=LOCAL_NODE,
        )
        loop = process_loop()  # one per process: clients the runner caches stay usable
        finished: queue.SimpleQueue[Future[RunRecord]] = queue.SimpleQueue()
        running: dict[Future[RunRecord], RunContext] = {}
        try:
            while not self.stop_requested:
                room = concurrency - len(running)
                if room > 0:
                    feed.top_up(room)
                    for ctx in feed.take(room):
                        fut = loop.submit(core.run(ctx))
                        running[fut] = ctx
                        fut.add_done_callback(finished.put)
                if not running:
                    return
                try:
                    fut = finished.get(timeout=_POLL_S)
                except queue.Empty:
                    continue
                yield from _records(fut, finished, running)
            feed.close()  # stopping: runs already finished are recorded, the rest cancelled
            for fut in list(running):
                if not fut.done():
                    fut.cancel()
            yield from _drained(finished, running)
        finally:
            for fut in running:
                fut.cancel()


def _drained(
    finished: queue.SimpleQueue[Future[RunRecord]], running: dict[Future[RunRecord], RunContext]
) -> Iterator[RunRecord]:
    """The records of runs that finished before the stop (cancelled ones are skipped)."""
    try:
        first = finished.get_nowait()
    except queue.Empty:
        return
    yield from _records(first, finished, running)


def _records(
    first: Future[RunRecord],
    finished: queue.SimpleQueue[Future[RunRecord]],
    running: dict[Future[RunRecord], RunContext],
) -> Iterator[RunRecord]:
    """The record of ``first`` and of every other run finished meanwhile."""
    fut: Future[RunRecord] | None = first
    while fut is not None:
        ctx = running.pop(fut, None)
        if ctx is not None and not fut.cancelled():  # cancelled: stopped, not recorded
            exc = fut.exception()
            if exc is None:
                yield fut.result()
            else:  # the engine's own error around a run: still one recorded run
                yield failed_record(ctx, type(exc).__name__, str(exc), 0.0, LOCAL_NODE)
        try:
            fut = finished.get_nowait()
        except queue.Empty:
            fut = None
