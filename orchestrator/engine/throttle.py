"""One adaptive concurrency limit for the whole sweep (and an optional requests-per-minute cap).

The :class:`Throttle` is the sweep's single source of truth: every worker reports what its runs
met (refused by a rate limit, or served) and reads back how many runs the sweep may have in
flight. In-process it is called directly; on Ray one actor holds it for every worker on every
node (``ray_pool``).

The limit moves by additive increase, multiplicative decrease (as TCP's congestion window):

- a *429 episode* — a refusal reported at least ``cooldown_s`` after the last cut — multiplies
  the limit by ``factor`` (0.8); refusals inside the cooldown belong to runs started before the
  cut and do not cut again;
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


@dataclass
class Throttle:
    """The sweep's adaptive concurrency limit (thread-safe)."""

    ceiling: int
    """The configured ``concurrency``: the limit never grows past it."""
    per_minute: float | None = None
    factor: float = CUT_FACTOR
    cooldown_s: float = COOLDOWN_S
    clock: Callable[[], float] = time.monotonic
    limit: int = 0
    served: int = 0
    refused: int = 0
    lowest: int = 0
    moves: list[Move] = field(default_factory=list)
    _started: float = 0.0
    _last_cut: float = -math.inf
    _clean: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.limit = self.lowest = self.ceiling
        self._started = self.clock()

    def report(self, refused: int = 0, served: int = 0) -> Allowance:
        """Take a worker's counts since its last report; return the allowance."""
        with self._lock:
            now = self.clock()
            self.refused += refused
            self.served += served
            if refused:
                self._clean = 0
                if now - self._last_cut >= self.cooldown_s:
                    self._last_cut = now
                    self._move(max(1, math.floor(self.limit * self.factor)), "cut", now)
            elif served:
                self._clean += served
                if self._clean >= self.limit and self.limit < self.ceiling:
                    self._clean = 0
                    self._move(self.limit + 1, "grow", now)
            return Allowance(self.limit, self.per_minute)

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
