"""A worker's door to the sweep's throttle: how many of its runs may be in flight now, and when
the next request may start.

Each worker process has one :class:`WorkerSlots` on its event loop. A run holds a slot from the
moment it calls the runner until the call returns (a run waiting out a ``Retry-After`` gives its
slot back). The slots report what their runs met to the sweep's :class:`~.throttle.Throttle` —
at once after a refusal, else at most every :data:`SYNC_S` — and size themselves to their part of
the limit that comes back: worker ``index`` of ``workers`` gets ``limit // workers``, plus one
of the remainder, and at least one. A limit cut below the number of workers therefore lets the
sweep hold up to one call per worker: the limit grows only on served calls, so a worker left at
zero slots, holding runs while the workers with slots ran out of theirs, stalled the sweep for
good (issue 45); one call per worker is what a refused call's ``Retry-After`` wait then paces. A
requests-per-minute cap becomes a token bucket refilled at the worker's share of the rate.

Before its first run the worker asks the throttle for the allowance (the one it was built with
may be the configured concurrency; the throttle starts lower). A call served after a cut it
started before is not reported as served: growth and clean rounds count calls started at the
current limit only (during an outage, the calls the API held before it are no sign that it is
back).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from counterfact.orchestrator.engine.pacing.throttle import Allowance

SYNC_S = 0.2
"""Longest time between two reports of served runs."""
WAITING_SYNC_S = 0.5
"""How often a worker with runs waiting for a slot asks for the limit again."""

Link = Callable[[int, int, int], Awaitable[Allowance]]
"""Report (refused in this epoch, served, refused from an earlier epoch) since the last report;
get the sweep's allowance back."""


class WorkerSlots:
    """Slots and request tokens for one worker's runs (use from one event loop only)."""

    def __init__(self, link: Link, start: Allowance, index: int = 0, workers: int = 1) -> None:
        self._link = link
        self._index = index
        self._workers = max(1, workers)
        self._share = 1.0 / self._workers
        self._allowance = start
        self.in_use = 0
        self._refused = 0
        self._stale = 0
        self._served = 0
        self._last_sync = time.monotonic()
        self._sync_task: asyncio.Task[None] | None = None
        self._first: asyncio.Task[None] | None = None
        self._changed: asyncio.Event | None = None
        self._bucket: asyncio.Lock | None = None
        self._tokens = 1.0
        self._filled = time.monotonic()

    @property
    def capacity(self) -> int:
        """Runs this worker may have in flight now: its part of the sweep's limit, at least one
        (a worker at zero could hold runs nothing would ever start).
        """
        whole, rest = divmod(self._allowance.limit, self._workers)
        return max(1, whole + (self._index < rest))

    @property
    def epoch(self) -> int:
        """The throttle's epoch as these slots last heard it."""
        return self._allowance.epoch

    def _rate(self) -> float | None:
        per_minute = self._allowance.per_minute
        return None if per_minute is None else per_minute * self._share / 60.0

    async def acquire(self) -> int:
        """Wait for a free slot, then for a request token (with a per-minute cap); return the
        epoch the call starts in (hand it back to :meth:`release`).
        """
        if self._changed is None:
            self._changed = asyncio.Event()
            self._bucket = asyncio.Lock()
            self._first = asyncio.get_running_loop().create_task(self._sync())
        if self._first is not None:
            await asyncio.shield(self._first)  # the first runs wait for the throttle's word
            self._first = None
        while self.in_use >= self.capacity:
            self._changed.clear()
            try:  # a worker with no call in flight has no releases to report on: ask now and then
                await asyncio.wait_for(self._changed.wait(), WAITING_SYNC_S)
            except asyncio.TimeoutError:
                self._start_sync()
        self.in_use += 1
        try:
            await self._token()
        except BaseException:
            self.in_use -= 1
            self._wake()
            raise
        return self.epoch

    async def _token(self) -> None:
        rate = self._rate()
        if rate is None or self._bucket is None:
            return
        async with self._bucket:
            burst = max(1.0, rate)  # one second's worth at most
            while True:
                now = time.monotonic()
                self._tokens = min(burst, self._tokens + (now - self._filled) * rate)
                self._filled = now
                if self._tokens >= 1.0:
                    self._tokens -= 1.0
                    return
                await asyncio.sleep((1.0 - self._tokens) / rate)

    def release(self, *, refused: bool = False, served: bool = False, epoch: int = 0) -> None:
        """Give the slot back; count what the call met (``epoch``: what :meth:`acquire`
        returned) and report when due.
        """
        self.in_use -= 1
        if refused and epoch == self.epoch:
            self._refused += 1
        elif refused:
            self._stale += 1
        self._served += served and epoch == self.epoch
        self._wake()
        if self._refused or self._stale or time.monotonic() - self._last_sync >= SYNC_S:
            self._start_sync()

    def _start_sync(self) -> None:
        if self._sync_task is None or self._sync_task.done():
            self._sync_task = asyncio.get_running_loop().create_task(self._sync())

    def _wake(self) -> None:
        if self._changed is not None:
            self._changed.set()

    async def _sync(self) -> None:
        """Report until no refusal is left unreported (ones that arrive meanwhile included)."""
        while True:
            refused, served, stale = self._refused, self._served, self._stale
            self._refused = self._served = self._stale = 0
            self._last_sync = time.monotonic()
            try:
                self._allowance = await self._link(refused, served, stale)
            except Exception:  # the throttle is unreachable (its node died): keep the last limit
                return
            self._wake()
            if not (self._refused or self._stale):
                return
