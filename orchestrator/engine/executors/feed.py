"""Runs handed to an executor while it runs: the driver adds waves and cancels decided arms.

An executor takes runs from the feed whenever it has a free slot. When it finds fewer runs than
free slots, it asks the feed to :meth:`RunFeed.top_up`, which calls the driver's ``refill``
(a sequential sweep then schedules the next wave of an undecided arm ahead of need, so workers
are not idle while waves are judged). Runs still queued can be withdrawn with
:meth:`RunFeed.cancel`; runs already handed to a worker finish and are recorded.

The driver and the executor share one thread (the executor is a generator the driver iterates),
so the feed needs no lock.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator

from counterfact.orchestrator.engine.pacing.budget import Budget
from counterfact.orchestrator.engine.watching.live import LiveTracker
from counterfact.probes.runner import RunContext

Refill = Callable[[int], None]
"""Asked for about ``n`` more runs: put them into the feed (or nothing, when none are due)."""


class RunFeed:
    """A first-in, first-out queue of run contexts that can be added to and withdrawn from."""

    def __init__(
        self,
        contexts: Iterable[RunContext] = (),
        refill: Refill | None = None,
        *,
        budget: Budget | None = None,
        live: LiveTracker | None = None,
    ) -> None:
        self._queue: deque[RunContext] = deque(contexts)
        self._refill = refill
        self.budget = budget
        """Runs are handed out only while the budget has room."""
        self.live = live
        """Told how many runs are handed out (the in-flight count)."""
        self.cancelled = 0
        """Runs withdrawn before they started."""
        self.closed = False
        """A stop was requested: nothing more is queued (a resume runs what is missing)."""

    def __len__(self) -> int:
        return len(self._queue)

    def __iter__(self) -> Iterator[RunContext]:
        """Drain the feed (for executors that loop over their runs; refills are not asked)."""
        while self._queue:
            if self.live is not None:
                self.live.started(1)
            yield self._queue.popleft()

    def put(self, contexts: Iterable[RunContext]) -> None:
        """Queue runs behind those already queued (ignored once the feed is closed)."""
        if not self.closed:
            self._queue.extend(contexts)

    def take(self, n: int) -> list[RunContext]:
        """Up to ``n`` runs, oldest first (fewer when the budget binds; at none, the feed
        closes: scheduling stops and what is queued is not started).
        """
        if self.budget is not None and self._queue:
            room = self.budget.room()
            if room is not None and room < n:
                n = room
                if room == 0:
                    self.budget.not_started += len(self._queue)
                    self.close()
                    return []
        taken = [self._queue.popleft() for _ in range(min(n, len(self._queue)))]
        if self.budget is not None:
            self.budget.started(len(taken))
        if self.live is not None:
            self.live.started(len(taken))
        return taken

    def top_up(self, n: int) -> None:
        """Ask the driver for more work when fewer than ``n`` runs are queued."""
        if self._refill is not None and not self.closed and len(self._queue) < n:
            self._refill(n - len(self._queue))

    def cancel(self, drop: Callable[[RunContext], bool]) -> int:
        """Withdraw the queued runs ``drop`` selects; return how many."""
        kept = deque(c for c in self._queue if not drop(c))
        gone = len(self._queue) - len(kept)
        self._queue = kept
        self.cancelled += gone
        return gone

    def close(self) -> None:
        """Withdraw everything and accept nothing more (a stop was requested: a resume runs
        these).
        """
        self.closed = True
        self._queue.clear()


def as_feed(contexts: Iterable[RunContext] | RunFeed) -> RunFeed:
    """``contexts`` as a feed (a fixed plan becomes a feed that is never refilled)."""
    return contexts if isinstance(contexts, RunFeed) else RunFeed(contexts)
