"""One adaptive concurrency limit for the whole sweep (and an optional requests-per-minute cap).

The :class:`Throttle` is the sweep's single source of truth: every worker reports what its runs
met (refused by a rate limit, or served) and reads back how many runs the sweep may have in
flight. In-process it is called directly; on Ray one actor holds it for every worker on every
node (``ray_pool``).

The limit moves by additive increase, multiplicative decrease (as TCP's congestion window):

- a *429 episode* — a refusal of a call that started after the last cut (its ``epoch`` is
  current), at least ``cooldown_s`` after that cut — multiplies the limit by ``factor`` (0.8);
  refusals of calls started before the cut are counted but do not cut again (with calls of many
  seconds, the cooldown alone would cut once a second for each call's duration);
- a *clean round* — as many served runs as the limit, with no refusal — adds one, up to the
  configured ``concurrency``.

Every move is kept (time, new limit, why) for ``summary.json``.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

CUT_FACTOR = 0.8
COOLDOWN_S = 1.0
MAX_MOVES_KEPT = 500
"""Moves kept for the record (the first ones, then every later cut)."""


@dataclass(frozen=True)
class Move:
    """One change of the allowed concurrency."""

    at_s: float
    """Seconds since the throttle started."""
    limit: int
    """The limit from then on."""
    why: Literal["cut", "grow"]
    """``cut``: a 429 episode; ``grow``: a clean round."""


@dataclass(frozen=True)
class Allowance:
    """What a worker may do, as of its last report."""

    limit: int
    """Runs the whole sweep may have in flight now."""
    per_minute: float | None
    """Requests per minute the whole sweep may start (None: no cap)."""
    epoch: int = 0
    """Cuts so far: a call started in this epoch and refused may cut again."""


@dataclass
class Throttle:
    """The sweep's adaptive concurrency limit (thread-safe)."""

    ceiling: int
    """The configured ``concurrency``: the limit never grows past it."""
    per_minute: float | None = None
    factor: float = CUT_FACTOR
    cooldown_s: float = COOLDOWN_S
    clock: Callable[[], float] = time.monotonic
    limit: int = field(init=False, default=0)
    served: int = field(init=False, default=0)
    refused: int = field(init=False, default=0)
    lowest: int = field(init=False, default=0)
    epoch: int = field(init=False, default=0)
    moves: list[Move] = field(init=False, default_factory=list)
    _started: float = field(init=False, default=0.0)
    _last_cut: float = field(init=False, default=-math.inf)
    _clean: int = field(init=False, default=0)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.limit = self.lowest = self.ceiling
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
            if refused or stale:
                self._clean = 0
            if refused and now - self._last_cut >= self.cooldown_s:
                self._last_cut = now
                self.epoch += 1
                self._move(max(1, math.floor(self.limit * self.factor)), "cut", now)
            elif served:
                self._clean += served
                if self._clean >= self.limit and self.limit < self.ceiling:
                    self._clean = 0
                    self._move(self.limit + 1, "grow", now)
            return Allowance(self.limit, self.per_minute, self.epoch)

    def _move(self, limit: int, why: Literal["cut", "grow"], now: float) -> None:
        if limit == self.limit:
            return
        self.limit = limit
        self.lowest = min(self.lowest, limit)
        if len(self.moves) < MAX_MOVES_KEPT or why == "cut":
            self.moves.append(Move(round(now - self._started, 3), limit, why))

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
            }
