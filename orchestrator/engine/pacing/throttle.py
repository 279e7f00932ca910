"""One adaptive concurrency limit for the whole sweep (and an optional requests-per-minute cap).

The :class:`Throttle` is the sweep's single source of truth: every worker reports what its runs
met (refused by a rate limit, or served) and reads back how many runs the sweep may have in
flight. In-process it is called directly; on Ray one actor holds it for every worker on every
node (``ray_pool``).

The controller tells a *busy* API (a shared API's weather: a few random 429s, waited out and
retried) from a *full* one (it refuses every call beyond what it holds):

- **The API is full** when, among calls started since the last cut (the current ``epoch``),
  :data:`BURST` refusals arrive with no served call between them — a server with a hard cap
  refuses back to back every call beyond it, a random 429 is followed by served calls — or
  when refusals are at least :data:`FULL_RATE` of the last ``max(2 × limit, MIN_WINDOW)``
  outcomes. Then the limit is multiplied by ``factor`` (0.8), but not below the last limit
  that was served cleanly when the refusals came from above it (the wall is just above that).
  Calls started before a cut and refused after it are counted, never judged: the cut already
  answered them. Refusals of new calls after a cut may cut again at once, so a burst that starts
  far above a server's cap steps down until the refusals stop.
- **Growth is multiplicative up to** ``restore`` — one more slot per served call, doubling the
  limit per round — and additive beyond it: one more per clean round (as many served calls as
  the limit, with no cut), and :data:`PROBE_ROUNDS` clean rounds before stepping back onto the
  limit where the API was last full. ``restore`` is the configured ``concurrency`` at the start
  (slow start), the last limit served cleanly after a cut at or below it (an outage: come back
  to it fast), the limit served cleanly below a wall, or where a cut landed when nothing was
  served cleanly yet.
- **Slow start**: the limit begins at :func:`start_limit` (half the configured one, at least
  :data:`SLOW_START_MIN`) and grows by what is served, so the first burst never goes far past
  what the API holds.

Every move is kept (time, new limit, why) for ``summary.json``.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

CUT_FACTOR = 0.8
COOLDOWN_S = 0.0
"""Seconds after a cut before another may come (the epoch already keeps a cut's own
refusals from cutting again)."""
BURST = 4
"""Refusals of current calls, with no served call between them, that say the API is full."""
FULL_RATE = 0.2
"""Share of refusals in the window that says the API is full."""
MIN_WINDOW = 40
"""Outcomes the refusal rate is judged over, at least (else twice the limit)."""
PROBE_ROUNDS = 4
"""Clean rounds before growing back onto the limit where the API was last full (doubled each
time the API is full there again, up to :data:`MAX_PROBE_ROUNDS`)."""
MAX_PROBE_ROUNDS = 32
SLOW_START_MIN = 16
"""The lowest limit a sweep starts at (unless ``concurrency`` is lower)."""
MAX_MOVES_KEPT = 500
"""Moves kept for the record (the first ones, then every later cut)."""


def start_limit(ceiling: int) -> int:
    """Where the limit starts: half of ``ceiling``, at least :data:`SLOW_START_MIN`, at most
    ``ceiling``.
    """
    return max(1, min(ceiling, max(SLOW_START_MIN, ceiling // 2)))


@dataclass(frozen=True)
class Move:
    """One change of the allowed concurrency."""

    at_s: float
    """Seconds since the throttle started."""
    limit: int
    """The limit from then on."""
    why: Literal["cut", "grow"]
    """``cut``: the API was full; ``grow``: served calls (fast) or a clean round."""


@dataclass(frozen=True)
class Allowance:
    """What a worker may do, as of its last report."""

    limit: int
    """Runs the whole sweep may have in flight now."""
    per_minute: float | None
    """Requests per minute the whole sweep may start (None: no cap)."""
    epoch: int = 0
    """Cuts so far: a call started in this epoch and refused may cut again."""


@dataclass(frozen=True)
class ThrottleNow:
    """The limiter as it stands, for the progress line and ``live.json`` (read without its lock:
    a reading may be a moment old, never torn).
    """

    limit: int
    """Runs the whole sweep may have in flight now."""
    ceiling: int
    """The configured ``concurrency``."""
    refused: int
    """Rate-limit refusals reported so far."""


@dataclass
class _Window:
    """Outcomes of the current epoch's calls, the last ``size`` or a little more."""

    reports: deque[tuple[int, int]] = field(default_factory=deque)
    refused: int = 0
    served: int = 0

    def add(self, refused: int, served: int, size: int) -> None:
        self.reports.append((refused, served))
        self.refused += refused
        self.served += served
        while len(self.reports) > 1:
            old_refused, old_served = self.reports[0]
            if self.refused + self.served - old_refused - old_served < size:
                break
            self.reports.popleft()
            self.refused -= old_refused
            self.served -= old_served

    def clear(self) -> None:
        self.reports.clear()
        self.refused = self.served = 0


@dataclass
class Throttle:
    """The sweep's adaptive concurrency limit (thread-safe)."""

    ceiling: int
    """The configured ``concurrency``: the limit never grows past it."""
    per_minute: float | None = None
    factor: float = CUT_FACTOR
    cooldown_s: float = COOLDOWN_S
    clock: Callable[[], float] = time.monotonic
    start: int | None = None
    """The first limit (None: :func:`start_limit` of ``ceiling``)."""
    limit: int = field(init=False, default=0)
    served: int = field(init=False, default=0)
    refused: int = field(init=False, default=0)
    lowest: int = field(init=False, default=0)
    epoch: int = field(init=False, default=0)
    good: int | None = field(init=False, default=None)
    """The limit of the last clean round (None until one completes)."""
    restore: int = field(init=False, default=0)
    """Growth is multiplicative up to here, additive beyond."""
    wall: int | None = field(init=False, default=None)
    """The limit at the last cut."""
    moves: list[Move] = field(init=False, default_factory=list)
    _started: float = field(init=False, default=0.0)
    _last_cut: float = field(init=False, default=-math.inf)
    _run: int = field(init=False, default=0)
    _window: _Window = field(init=False, default_factory=_Window)
    _round_limit: int = field(init=False, default=0)
    _round_served: int = field(init=False, default=0)
    _clean_rounds: int = field(init=False, default=0)
    _probe_rounds: int = field(init=False, default=PROBE_ROUNDS)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        first = start_limit(self.ceiling) if self.start is None else self.start
        self.start = max(1, min(self.ceiling, first))
        self.limit = self.lowest = self._round_limit = self.start
        self.restore = self.ceiling
        self._started = self.clock()

    def report(self, refused: int = 0, served: int = 0, stale: int = 0) -> Allowance:
        """Take a worker's counts since its last report — ``refused``: calls of the current
        epoch refused; ``stale``: refused calls started before the last cut — and return the
        allowance.
        """
        with self._lock:
            now = self.clock()
            self.refused += refused + stale
            self.served += served
            self._run = refused if served else self._run + refused
            self._window.add(refused, served, max(2 * self.limit, MIN_WINDOW))
            if refused and self._full() and now - self._last_cut >= self.cooldown_s:
                self._cut(now)
            elif served:
                self._grow(served, now)
            return Allowance(self.limit, self.per_minute, self.epoch)

    def _full(self) -> bool:
        """Do the current epoch's refusals say the API is full (not just busy)?"""
        if self._run >= BURST:
            return True
        window = self._window
        total = window.refused + window.served
        return window.refused >= BURST and window.refused >= FULL_RATE * total

    def _cut(self, now: float) -> None:
        limit = self.limit
        cut = max(1, math.floor(limit * self.factor))
        if self.good is None:  # nothing served cleanly yet: grow from here by rounds only
            self.restore = cut
        elif self.good < limit:  # refused above the last clean limit: the wall is between
            cut = max(cut, self.good)
            self.restore = self.good
        else:  # refused at or below what was served cleanly (an outage): come back fast
            self.restore = self.good
        same_wall = self.wall == limit
        self._probe_rounds = (
            min(2 * self._probe_rounds, MAX_PROBE_ROUNDS) if same_wall else PROBE_ROUNDS
        )
        self.wall = limit
        self.epoch += 1
        self._last_cut = now
        self._run = self._round_served = self._clean_rounds = 0
        self._window.clear()
        self._move(cut, "cut", now)
        self._round_limit = self.limit

    def _grow(self, served: int, now: float) -> None:
        if self.limit < self.restore:  # one more slot per served call: doubling per round
            self._move(min(self.restore, self.limit + served), "grow", now)
        self._round_served += served
        if self._round_served < self._round_limit:
            return
        self.good = self._round_limit
        self._round_served = 0
        if self.limit >= self.restore and self.limit < self.ceiling:
            self._clean_rounds += 1
            onto_wall = self.wall is not None and self.limit + 1 >= self.wall
            if self._clean_rounds >= (self._probe_rounds if onto_wall else 1):
                self._clean_rounds = 0
                self._move(self.limit + 1, "grow", now)
        self._round_limit = self.limit

    def _move(self, limit: int, why: Literal["cut", "grow"], now: float) -> None:
        if limit == self.limit:
            return
        self.limit = limit
        self.lowest = min(self.lowest, limit)
        if len(self.moves) < MAX_MOVES_KEPT or why == "cut":
            self.moves.append(Move(round(now - self._started, 3), limit, why))

    def now(self) -> ThrottleNow:
        """The current limit and the refusals so far, without taking the lock (two integers read
        while a worker reports may be one report apart; nothing waits on a busy throttle).
        """
        return ThrottleNow(self.limit, self.ceiling, self.refused)

    def summary(self) -> dict[str, object]:
        """How the limit moved, for ``summary.json`` (``concurrency``)."""
        with self._lock:
            return {
                "configured": self.ceiling,
                "final": self.limit,
                "lowest": self.lowest,
                "cuts": sum(m.why == "cut" for m in self.moves),
                "refusals": self.refused,
                "requests_per_minute": self.per_minute,
                "moves": [[m.at_s, m.limit, m.why] for m in self.moves],
                "start": self.start,
                "last_good": self.good,
            }
