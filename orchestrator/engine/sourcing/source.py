"""Where each planned run's record comes from, once: read back from the run directory (a
resume), taken from the run cache, or executed — in that order. Shared by the sweep and bisect
drivers, so both resume, cache, count and log runs the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from counterfact.orchestrator.engine.executors.base import Executor
from counterfact.orchestrator.engine.executors.feed import Refill, RunFeed
from counterfact.orchestrator.engine.loading.loader import RunnerRef
from counterfact.orchestrator.engine.pacing.budget import Budget
from counterfact.orchestrator.engine.stopping.failwatch import FailureWatch
from counterfact.orchestrator.engine.watching.events import Logger
from counterfact.orchestrator.engine.watching.live import LiveTracker
from counterfact.orchestrator.storage.cache import RunCache
from counterfact.orchestrator.storage.rundir import RunStore
from counterfact.probes.arms import ArmSpec
from counterfact.probes.runner import RunContext
from counterfact.records.runs import RunRecord

Planned = tuple[RunContext, ArmSpec]
"""A run to have: its context, and the arm's spec (the cache keys on its configuration)."""


class RunSource:
    """Gets records for planned runs, appending every new one to the store as it arrives."""

    def __init__(
        self,
        runner: RunnerRef,
        store: RunStore,
        executor: Executor,
        cache: RunCache | None,
        log: Logger,
        *,
        watch: FailureWatch | None = None,
        budget: Budget | None = None,
        live: LiveTracker | None = None,
        live_now: Callable[[], object] | None = None,
    ) -> None:
        self.runner = runner
        self.store = store
        self.executor = executor
        self.cache = cache
        self.log = log
        self.runner_calls = 0
        """Runner calls made (retries included)."""
        self.from_cache = 0
        """Records taken from the run cache."""
        self._planned: dict[tuple[str, str, int], Planned] = {}
        """Queued runs' contexts and specs, for the cache."""
        if cache is not None and store.moved_to is not None:
            adopted = cache.adopt(store.moved_to)
            log.info("cache.adopted", runs=adopted, moved_to=str(store.moved_to))
        self.watch = watch
        """Stops scheduling when the runner evidently cannot work."""
        self.aborted: str | None = None
        """Why the watch stopped scheduling (then the executor was asked to stop)."""
        self.budget = budget
        """Runs start only while the spend budget has room."""
        self.throttle: dict[str, object] | None = None
        """How the executor's concurrency limit moved (read before it closes)."""
        self.live = live
        """Counts runs handed out and back (``live.json``, the progress line)."""
        self.live_now = live_now
        """Writes ``live.json`` and shows its numbers at once."""

    @property
    def budget_exhausted(self) -> bool:
        """True once the budget stopped scheduling."""
        return self.budget is not None and bool(self.budget.exhausted)

    def split(self, planned: Sequence[Planned]) -> tuple[list[RunRecord], list[Planned]]:
        """Records already had (read back, or from the cache: appended now), and runs to execute.

        The records are returned only when the store keeps them (bisect, in-memory sweeps); a
        streaming sweep's read-back records already went to its tallies.
        """
        known: list[RunRecord] = []
        todo: list[Planned] = []
        for ctx, arm in planned:
            key = (ctx.scenario.id, ctx.arm.id, ctx.seed)
            if self.store.has(*key):
                record = self.store.get(*key)
                if record is not None:
                    known.append(record)
                continue
            cached = self._cached(ctx, arm)
            if cached is None:
                todo.append((ctx, arm))
                continue
            self.store.append(cached)
            self.from_cache += 1
            if self.store.keep:
                known.append(cached)
        return known, todo

    def _cached(self, ctx: RunContext, arm: ArmSpec) -> RunRecord | None:
        """The run cache's record of this run; an entry that fails its check is logged."""
        if self.cache is None:
            return None
        before = self.cache.rejected
        record = self.cache.get(ctx, arm)
        if self.cache.rejected > before:
            self.log.warning(
                "cache.entry_rejected",
                scenario=ctx.scenario.id,
                arm=ctx.arm.id,
                seed=ctx.seed,
                note="damaged, edited or another run's: not used; the run is executed",
            )
        return record

    def _watch(self, record: RunRecord, succeeded: bool) -> None:
        """``succeeded``: a success was recorded before ``record``'s batch (read back, cached or
        new); the watch itself sees the batch's own records in order.
        """
        if self.watch is None or self.aborted is not None:
            return
        if succeeded:
            self.watch.succeeded = True
        reason = self.watch.see(record)
        if reason is not None:
            self.aborted = reason
            self.log.error("runs.stopped", reason=reason, runs=self.watch.runs)
            self.executor.request_stop()

    def show_live(self) -> None:
        """``live.json`` and the progress line's numbers now (the runs just ended)."""
        if self.live_now is not None:
            self.live_now()

    def feed(self, refill: Refill | None = None) -> RunFeed:
        """An empty feed that hands runs out under this source's budget and counts them live."""
        return RunFeed(refill=refill, budget=self.budget, live=self.live)

    def enqueue(self, feed: RunFeed, todo: Sequence[Planned]) -> None:
        """Queue runs to execute on ``feed`` (remembering each arm's spec for the cache)."""
        if self.cache is not None:  # the cache keys on the arm's spec: keep it per run
            self._planned.update(((c.scenario.id, c.arm.id, c.seed), (c, a)) for c, a in todo)
        feed.put(c for c, _ in todo)

    def execute(self, todo: Sequence[Planned] | RunFeed) -> Iterator[RunRecord]:
        """Run ``todo`` (or what is fed to it, queued with :meth:`enqueue`) on the executor;
        yield each record once it is stored (and cached).
        """
        if isinstance(todo, RunFeed):
            feed = todo  # built with this source's budget and live counts (:meth:`feed`)
        else:
            feed = self.feed()
            self.enqueue(feed, todo)
        live = self.live
        for batch in self.executor.batches(self.runner, feed):
            if live is not None:
                for returned in batch.records:
                    live.returned(returned)
            succeeded = self.store.done.count > self.store.failed
            # every line of the batch is flushed before any of its records is counted
            for record in self.store.append_batch(batch.records, batch.lines):
                yield self._took(record, succeeded)

    def _took(self, record: RunRecord, succeeded: bool) -> RunRecord:
        """Count, watch, cache and log a record just stored (as stored: unwritable text
        escaped).
        """
        if self.budget is not None:
            self.budget.finished()
        self.runner_calls += record.attempts
        self._watch(record, succeeded)
        spec = self._planned.pop((record.scenario, record.arm, record.seed), None)
        if self.cache is not None and spec is not None:
            self.cache.put(spec[0], spec[1], record)
        self.log.debug("run.done", scenario=record.scenario, arm=record.arm, seed=record.seed)
        if record.error is not None:
            self.log.warning(
                "run.failed",
                scenario=record.scenario,
                arm=record.arm,
                seed=record.seed,
                error=f"{record.error.type}: {record.error.message}"[:300],
            )
        return record
