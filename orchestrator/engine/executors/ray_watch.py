"""Noticing a worker actor whose event loop a runner blocks, and giving that actor up.

A worker actor (:class:`~counterfact.orchestrator.engine.executors.ray_pool.PoolWorker`) runs
all its calls on one event loop. An ``async def`` runner that calls ``time.sleep`` or spins
there never gives the loop back: none of the actor's ``timeout_s`` (callbacks of that loop) can
fire, and the driver would wait for its calls forever. So the driver watches each actor: once a
call has been in flight on it for longer than the runs' ``timeout_s`` (else
:data:`~counterfact.defaults.LOOP_BLOCKED_S`), it sends the actor a ping, which that same loop
answers; a ping unanswered for :data:`CONFIRM_S` means the loop is blocked. The actor is then
killed and replaced, and its calls take the lost-worker path: each is run again alone, as a
plain task, a few at a time (``ray_drive.SUSPECT_LANES``). There, a neighbour finishes; the run
that blocks is recorded as :class:`~counterfact.exceptions.EventLoopBlocked` once its own task
passes the same limit (:func:`solo_limit`, :func:`solo_blocked_record`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from counterfact.exceptions import EventLoopBlocked
from counterfact.orchestrator.engine.calling.loopwatch import blocked_after, blocked_record
from counterfact.probes.runner import RunContext
from counterfact.records.runs import RunRecord

CONFIRM_S = 10.0
"""How long a worker actor that looks blocked has to answer a ping before it is given up: a
loaded machine delays an answer by seconds, a blocked loop never gives one."""
CHECK_EVERY_S = 0.5
"""How often the driver looks for calls in flight past the limit (each look reads them all)."""
START_S = 30.0
"""Seconds added to the limit of a run sent again alone after a blocked loop: the limit is
counted from the task's submission (the driver sends only a few such runs at a time, so each
starts when sent), and a fresh worker process may take this long to start on a loaded machine
(an innocent neighbour must not time out waiting for its process)."""
BLOCKED = EventLoopBlocked.__name__
"""The loss reason of the calls of an actor given up for a blocked loop."""


class Watched(Protocol):
    """A call in flight, as the watch reads it."""

    worker: int
    submitted: float
    actor: Any


@dataclass
class _Ping:
    ref: Any
    sent: float
    actor: Any


@dataclass
class ActorWatch:
    """Pings the actors holding a call older than ``after_s``; names those that do not answer."""

    ray: Any
    after_s: float
    confirm_s: float = CONFIRM_S
    given_up: list[Any] = field(default_factory=list)
    """The actors given up (their calls' losses are :data:`BLOCKED`)."""
    _pings: dict[int, _Ping] = field(default_factory=dict)
    _looked: float = -math.inf

    def look(self, actors: list[Any], calls: Iterable[Watched]) -> list[int]:
        """Indices of the actors whose loop is blocked (at most every :data:`CHECK_EVERY_S`)."""
        now = time.monotonic()
        if now - self._looked < CHECK_EVERY_S:
            return []
        self._looked = now
        late = self._late(actors, calls, now)
        for index in [i for i in self._pings if i not in late]:
            del self._pings[index]
        return [i for i in sorted(late) if self._silent(i, actors[i], now)]

    def _late(self, actors: list[Any], calls: Iterable[Watched], now: float) -> set[int]:
        """Actors (still in their slot) holding a call in flight for longer than ``after_s``."""
        return {
            c.worker
            for c in calls
            if c.worker >= 0 and c.actor is actors[c.worker] and now - c.submitted > self.after_s
        }

    def _silent(self, index: int, actor: Any, now: float) -> bool:
        """True when ``actor`` left a ping unanswered for ``confirm_s`` (it is then given up)."""
        ping = self._pings.get(index)
        if ping is None or ping.actor is not actor:
            self._pings[index] = _Ping(actor.ready.remote(), now, actor)
            return False
        answered, _ = self.ray.wait([ping.ref], timeout=0)
        if answered:  # it turns: ask again later, while a call stays late
            self._pings[index] = _Ping(actor.ready.remote(), now, actor)
            return False
        if now - ping.sent <= self.confirm_s:
            return False
        del self._pings[index]
        self.given_up.append(actor)
        return True

    def blocked(self, actor: Any) -> bool:
        """True when ``actor`` was given up for a blocked loop."""
        return any(actor is gone for gone in self.given_up)


def solo_limit(reason: str | None, timeout_s: float | None) -> float | None:
    """Seconds a run alone may take from its submission: ``timeout_s``, or for a run whose actor
    was given up for a blocked loop, the blocked-loop limit (it may block its own loop too) plus
    :data:`START_S`.
    """
    return blocked_after(timeout_s) + START_S if reason == BLOCKED else timeout_s


def solo_blocked_record(
    ctx: RunContext, timeout_s: float | None, elapsed: float, lost: int
) -> RunRecord:
    """The record of a run, lost with a blocked actor, that held its own task past the limit."""
    record = blocked_record(ctx, ctx, timeout_s, elapsed, None)
    return record.model_copy(update={"infra_retries": lost, "infra_error": BLOCKED})
