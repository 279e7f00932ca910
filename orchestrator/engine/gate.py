"""A worker's door to the sweep's throttle: how many of its runs may be in flight now, and when
the next request may start.

Each worker process has one :class:`Gate` on its event loop. A run holds a slot from the moment
it calls the runner until the call returns (a run waiting out a ``Retry-After`` gives its slot
back). The gate reports what its runs met to the sweep's :class:`~.throttle.Throttle` — at once
after a refusal, else at most every :data:`SYNC_S` — and sizes itself to its ``share`` of the
limit that comes back (a Ray worker's share is 1/workers; in-process it is 1). A
requests-per-minute cap becomes a token bucket refilled at the worker's share of the rate.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable

from counterfact.orchestrator.engine.throttle import Allowance

SYNC_S = 0.2
"""Longest time between two reports of served runs."""

Link = Callable[[int, int], Awaitable[Allowance]]
"""Report (refused, served) since the last report; get the sweep's allowance back."""


class Gate:
    """Slots and request tokens for one worker's runs (use from one event loop only)."""

    def __init__(self, link: Link, start: Allowance, share: float = 1.0) -> None:
        self._link = link
        self._share = share
        self._allowance = start
        self.in_use = 0
        self._refused = 0
        self._served = 0
        self._last_sync = time.monotonic()
        self._sync_task: asyncio.Task[None] | None = None
        self._changed: asyncio.Event | None = None
        self._bucket: asyncio.Lock | None = None
        self._tokens = 1.0
        self._filled = time.monotonic()

    @property
    def capacity(self) -> int:
        """Runs this worker may have in flight now (at least one)."""
        return max(1, math.ceil(self._allowance.limit * self._share))

    def _rate(self) -> float | None:
        per_minute = self._allowance.per_minute
        return None if per_minute is None else per_minute * self._share / 60.0

    async def acquire(self) -> None:
        """Wait for a free slot, then for a request token (with a per-minute cap)."""
        if self._changed is None:
            self._changed = asyncio.Event()
            self._bucket = asyncio.Lock()
        while self.in_use >= self.capacity:
            self._changed.clear()
            await self._changed.wait()
        self.in_use += 1
        try:
            await self._token()
        except BaseException:
            self.in_use -= 1
            self._wake()
            raise

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

    def release(self, *, refused: bool = False, served: bool = False) -> None:
        """Give the slot back; count what the call met and report when due."""
        self.in_use -= 1
        self._refused += refused
        self._served += served
        self._wake()
        due = self._refused or time.monotonic() - self._last_sync >= SYNC_S
        if due and (self._sync_task is None or self._sync_task.done()):
            self._sync_task = asyncio.get_running_loop().create_task(self._sync())

    def _wake(self) -> None:
        if self._changed is not None:
            self._changed.set()

    async def _sync(self) -> None:
        refused, served = self._refused, self._served
        self._refused = self._served = 0
        self._last_sync = time.monotonic()
        try:
            self._allowance = await self._link(refused, served)
        except Exception:  # the throttle is unreachable (its node died): keep the last limit
            return
        self._wake()
