"""The sweep's live counts: one source for the terminal's progress line and ``live.json``.

The engine tells one :class:`LiveTracker` about every run as it happens, on the driver's thread:
:meth:`LiveTracker.started` when runs are handed to the executor (by the run feed, whichever
executor takes them: in-process, Ray tasks or Ray actors) and :meth:`LiveTracker.returned` when a
run's record comes back (the run source). Each is an integer addition or two: nothing is locked,
built or written per run. What the engine counts anyway is read where it is kept, not counted
twice: runs done and failed from the run store, spend from the sweep's spend tally.

The :class:`~.liveticker.LiveTicker` reads all of it from its own thread about once a second,
with the executor's view of its rate limiter
(:class:`~counterfact.orchestrator.engine.pacing.throttle.ThrottleNow`: on Ray the throttle actor's
record the driver reads once a second anyway, never a call per run), and builds the
:class:`~counterfact.records.LiveState` snapshot with :meth:`LiveTracker.snapshot`.

Reading counts another thread is adding to needs no lock in CPython: an ``int`` attribute is
read whole, and ``dict(d)`` copies a ``dict`` of ``str`` keys without giving up the interpreter
lock. Two counts read a moment apart may be one run apart; a snapshot is a reading, not a
ledger (``runs.jsonl`` is the ledger).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping

from counterfact.orchestrator.engine.calling.worker import now_iso
from counterfact.orchestrator.engine.pacing.throttle import ThrottleNow
from counterfact.records.live import LiveState, LiveStatus
from counterfact.records.runs import RunRecord

ENDED: frozenset[LiveStatus] = frozenset({"finished", "stopped", "interrupted"})
"""Statuses after which nothing is in flight and nothing is left to estimate."""


Counts = Callable[[], tuple[int, int]]
"""Records stored (read back, cached and new) and, of them, failed: the run store's counts."""
Spend = Callable[[], Mapping[str, float]]
"""Cost so far per unit (safe to call from another thread)."""


class LiveTracker:
    """Counts of one sweep (or bisection) since it started."""

    def __init__(
        self,
        sweep: str,
        *,
        counts: Counts,
        spend: Spend,
        budget: Mapping[str, float] | None = None,
        concurrency_max: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.sweep = sweep
        self.budget = {k: float(v) for k, v in (budget or {}).items()}
        self.concurrency_max = concurrency_max
        """The configured ``executor.concurrency`` (the throttle's ceiling wins when known)."""
        self.started_at = now_iso()
        self.status: LiveStatus = "starting"
        self.planned: int | None = None
        """Runs the sweep plans (None: unknown, as in a bisection: then no ETA)."""
        self.handed = 0
        """Runs handed to the executor."""
        self.back = 0
        """Of those, records that came back."""
        self.waited = 0
        """429s the records that came back say they waited out."""
        self._counts = counts
        self._spend = spend
        self._clock = clock
        self._first: float | None = None
        self._ended: float | None = None

    @property
    def done(self) -> int:
        """Records stored so far (read back, cached and new)."""
        return self._counts()[0]

    def started(self, n: int) -> None:
        """``n`` runs were handed to the executor (the first one: the runs are running)."""
        if not n:
            return
        self.handed += n
        if self._first is None:
            self._first = self._clock()
            if self.status == "starting":
                self.status = "running"

    def returned(self, record: RunRecord) -> None:
        """A run handed out came back as ``record``."""
        self.back += 1
        self.waited += record.rate_limited

    def mark(self, status: LiveStatus) -> None:
        """The sweep moved on (``judging``, or how it ended): the run rate stops there."""
        if status not in ("starting", "running") and self._ended is None:
            self._ended = self._clock()
        self.status = status

    def snapshot(self, throttle: ThrottleNow | None, refused_before: int = 0) -> LiveState:
        """The counts as a :class:`LiveState`; ``throttle``: the executor's limiter now
        (``refused_before``: its refusals before this sweep began, when the executor is reused).
        """
        status = self.status
        over = status in ENDED
        back = self.back
        done, failed = self._counts()
        rate = self._rate(back)
        planned = done if self.planned is None else self.planned
        eta = None
        if rate is not None and self.planned is not None and status == "running":
            eta = round(max(planned - done, 0) / rate, 1)
        waited = self.waited
        concurrency = None
        ceiling = self.concurrency_max
        if throttle is not None:
            waited = max(waited, throttle.refused - refused_before)
            concurrency, ceiling = throttle.limit, throttle.ceiling
        return LiveState(
            sweep=self.sweep,
            status=status,
            started_at=self.started_at,
            updated_at=now_iso(),
            runs_planned=planned,
            runs_done=done,
            runs_failed=failed,
            in_flight=0 if over else max(self.handed - back, 0),
            waited_429=waited,
            concurrency=concurrency,
            concurrency_max=ceiling,
            # a NaN or infinite cost (a hand-edited runs.jsonl) leaves its key out: JSON has none
            spend={k: round(v, 6) for k, v in self._spend().items() if math.isfinite(v)},
            budget=self.budget,
            runs_per_s=None if rate is None else round(rate, 3),
            eta_s=eta,
        )

    def _rate(self, back: int) -> float | None:
        """Runs back per second since the first was handed out (until the runs ended)."""
        first = self._first
        if first is None or not back:
            return None
        until = self._ended if self._ended is not None else self._clock()
        return back / max(until - first, 1e-6)
