"""Driving the worker actors of :mod:`.ray_pool`: runs handed over and records collected in
batches, lost runs sent again alone.

Each actor holds a *box* on the driver: the runs handed to it and not yet recorded. New runs go
to the least-loaded live actors, one ``take`` call per actor per round; every actor holding runs
has one ``collect`` call outstanding, which returns the records finished there as their
``runs.jsonl`` lines (once a fiftieth of what it holds is done, or after :data:`COLLECT_WAIT_S`).
So ``ray.wait`` reads a handful of references, not one per run in flight, and the driver pays
Ray's per-call cost per batch: with one call per run the driver's CPU, not the API, capped a
sweep at a few hundred in flight.

A box whose ``collect`` fails with an actor error lost its actor (its process died, its node was
lost, or the blocked-loop watch killed it): the slot gets a new actor and each run of the box is
sent again alone, as a plain task (the first loss is not held against a run). The runs of an
actor given up for a blocked loop go :data:`SUSPECT_LANES` per worker at a time (the rest wait on
the driver): each solo task's blocked-loop limit is counted from its submission, and dozens
submitted at once waited seconds each for a fresh worker process, so innocent runs passed the
limit before they started and were recorded as the run that blocked (issue 45).
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from counterfact.orchestrator.engine.calling.loopwatch import blocked_after
from counterfact.orchestrator.engine.calling.worker import failed_record
from counterfact.orchestrator.engine.executors.base import RecordBatch
from counterfact.orchestrator.engine.executors.feed import RunFeed
from counterfact.orchestrator.engine.executors.handover import decode, ship
from counterfact.orchestrator.engine.executors.ray_pool import SLACK_PER_WORKER, ActorPool
from counterfact.orchestrator.engine.executors.ray_watch import (
    BLOCKED,
    ActorWatch,
    solo_blocked_record,
    solo_limit,
)
from counterfact.probes.runner import RunContext
from counterfact.records.runs import RunRecord

_POLL_S = 0.1
COLLECT_WAIT_S = 0.1
"""Longest an actor's collection waits for records (the latency a record may gain)."""
WAIT_FRACTION = 50
"""A collection returns once a fiftieth of the actor's runs are done (at most 2% of its slots
sit idle between two collections)."""
SUSPECT_LANES = 1
"""Solo tasks in flight per worker (at least 2 in all) for the runs of actors given up for a
blocked loop: few enough that each starts when submitted, so its limit is counted from its
start; a lane held by the run that blocks is free again at its limit."""
STOP_WAIT_S = 5.0
"""How long a stop waits for the actors to hand over what finished before it."""

Key = tuple[str, str, int]
"""A run's (scenario, arm, seed): unique within one executor run."""


@dataclass
class _Call:
    ctx: RunContext
    worker: int
    """Index of the actor's slot; -1 for a solo task."""
    lost: int = 0
    reason: str | None = None
    submitted: float = 0.0
    actor: Any = None
    """The actor it was handed to."""


@dataclass
class _Box:
    """The runs handed to one actor and not yet recorded."""

    actor: Any
    slot: int
    calls: dict[Key, _Call] = field(default_factory=dict)
    collecting: Any = None
    """The outstanding ``collect`` call's reference (None: none)."""


def _key(ctx: RunContext | RunRecord) -> Key:
    if isinstance(ctx, RunRecord):
        return (ctx.scenario, ctx.arm, ctx.seed)
    return (ctx.scenario.id, ctx.arm.id, ctx.seed)


class _Drive:
    """One executor run's state on the driver: the boxes, the solo tasks and the watch."""

    def __init__(
        self, pool: ActorPool, solo_task: Any, infra_retries: int, channel: str = ""
    ) -> None:
        self.pool, self.ray = pool, pool.ray
        self.channel = channel
        """Whose runs these are on actors other drivers share (see ``PoolWorker.take``)."""
        self.solo_task, self.infra_retries = solo_task, infra_retries
        self.boxes: dict[int, _Box] = {}
        """By ``id(actor)``."""
        self.collects: dict[Any, _Box] = {}
        self.takes: dict[Any, tuple[_Box, list[Key]]] = {}
        """Outstanding ``take`` calls: a worker that cannot take a batch fails its runs."""
        self.solos: dict[Any, _Call] = {}
        self.suspects: deque[_Call] = deque()
        """Runs of actors given up for a blocked loop, waiting for a lane to run alone."""
        self.lanes = max(2, SUSPECT_LANES * pool.workers)
        self.watch = ActorWatch(self.ray, blocked_after(pool.timeout_s))

    @property
    def in_flight(self) -> int:
        held = sum(len(b.calls) for b in self.boxes.values())
        return held + len(self.solos) + len(self.suspects)

    def calls(self) -> Iterable[_Call]:
        for box in self.boxes.values():
            yield from box.calls.values()

    def hand_over(self, contexts: list[RunContext]) -> None:
        """Give each run to the least-loaded live actor; one ``take`` per actor."""
        live = [(i, a) for i, a in enumerate(self.pool.actors) if a is not None]
        load = {i: len(self._box(i, a).calls) for i, a in live}
        batches: dict[int, list[RunContext]] = {}
        for ctx in contexts:
            slot = min(load, key=load.__getitem__)
            load[slot] += 1
            batches.setdefault(slot, []).append(ctx)
        now = time.monotonic()
        for slot, batch in batches.items():
            actor = self.pool.actors[slot]
            box = self._box(slot, actor)
            for ctx in batch:
                box.calls[_key(ctx)] = _Call(ctx, slot, submitted=now, actor=actor)
            self.takes[actor.take.remote(ship(batch), self.channel)] = (
                box,
                [_key(c) for c in batch],
            )

    def _box(self, slot: int, actor: Any) -> _Box:
        box = self.boxes.get(id(actor))
        if box is None:
            box = self.boxes[id(actor)] = _Box(actor, slot)
        return box

    def ask(self) -> None:
        """A ``collect`` outstanding on every actor that holds runs."""
        for box in self.boxes.values():
            if box.calls and box.collecting is None:
                want = max(1, len(box.calls) // WAIT_FRACTION)
                box.collecting = box.actor.collect.remote(want, COLLECT_WAIT_S, self.channel)
                self.collects[box.collecting] = box

    def wait(self) -> Iterator[RecordBatch]:
        """Records of what returned within :data:`_POLL_S`."""
        refs = [*self.collects, *self.takes, *self.solos]
        if not refs:  # only runs waiting for a lane (none is free until a solo task ends)
            time.sleep(_POLL_S)
            return
        ready = self._ready(refs, timeout=0)  # every reference that is ready, not just one
        if not ready:
            ready, _ = self.ray.wait(refs, num_returns=1, timeout=_POLL_S)
        for ref in ready:
            if ref in self.collects:
                yield from self._collected(ref, self.collects.pop(ref))
            elif ref in self.takes:
                yield from self._taken(ref, *self.takes.pop(ref))
            else:
                record = self._solo_outcome(ref, self.solos.pop(ref))
                if record is not None:
                    yield RecordBatch((record,))

    def _ready(self, refs: list[Any], timeout: float, *, fetch_local: bool = True) -> list[Any]:
        if not refs:
            return []
        n = len(refs)
        ready: list[Any] = self.ray.wait(
            refs, num_returns=n, timeout=timeout, fetch_local=fetch_local
        )[0]
        return ready

    def _collected(self, ref: Any, box: _Box) -> Iterator[RecordBatch]:
        box.collecting = None
        try:
            blob = self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:  # its actor, or the result, is gone
            if id(box.actor) in self.boxes:
                yield from self._lost(box, BLOCKED if self.watch.blocked(box.actor) else exc)
            return
        if not blob:
            return
        decoded = decode(blob)
        for record in decoded.records:
            box.calls.pop(_key(record), None)
        yield RecordBatch(decoded.records, decoded.lines)

    def _taken(self, ref: Any, box: _Box, keys: list[Key]) -> Iterator[RecordBatch]:
        """A ``take`` that failed on a live actor fails its runs (a dead one: :meth:`_lost`)."""
        try:
            self.ray.get(ref)
        except _actor_errors(self.ray) as exc:
            if id(box.actor) in self.boxes:  # the runs never started: send them again alone
                yield from self._lost(box, exc)
            return
        except self.ray.exceptions.RayError as exc:
            calls = [box.calls.pop(k) for k in keys if k in box.calls]
            message = str(exc)[:500]
            records = [failed_record(c.ctx, type(exc).__name__, message, 0.0) for c in calls]
            yield RecordBatch(tuple(records))

    def _lost(self, box: _Box, cause: BaseException | str) -> Iterator[RecordBatch]:
        """``box``'s actor is gone: replace it and send each of its runs again alone."""
        del self.boxes[id(box.actor)]
        self.pool.replace(box.slot, box.actor)
        reason = cause if isinstance(cause, str) else type(cause).__name__
        calls, box.calls = list(box.calls.values()), {}
        for call in calls:
            record = self._resubmit(call, reason)
            if record is not None:
                yield RecordBatch((record,))

    def _resubmit(self, call: _Call, reason: str) -> RunRecord | None:
        """Run a lost run again alone, or record it as failed at the limit."""
        lost = call.lost + 1
        if lost > self.infra_retries + 1:  # the first loss, beside others, is not held against it
            record = failed_record(call.ctx, reason, "its worker died on every try", 0.0)
            return record.model_copy(update={"infra_retries": lost, "infra_error": reason})
        again = _Call(call.ctx, -1, lost, reason)
        if reason == BLOCKED:  # one of them blocks: its limit must count from its own start
            self.suspects.append(again)
            self.launch()
        else:
            self._solo(again)
        return None

    def _solo(self, call: _Call) -> None:
        task = self.solo_task.options(num_cpus=0)
        ref = task.remote(self.pool.runner_ref, ship([call.ctx]), self.pool.policy)
        call.submitted = time.monotonic()
        self.solos[ref] = call

    def launch(self) -> None:
        """Send waiting runs of a given-up actor alone, while a lane is free."""
        running = sum(c.reason == BLOCKED for c in self.solos.values())
        while self.suspects and running < self.lanes:
            self._solo(self.suspects.popleft())
            running += 1

    def _solo_outcome(self, ref: Any, call: _Call) -> RunRecord | None:
        """The record of a finished solo task, or None when it was sent again."""
        ray = self.ray
        try:
            value = ray.get(ref)
        except ray.exceptions.RayTaskError as exc:
            return failed_record(call.ctx, type(exc).__name__, str(exc)[:500], 0.0)
        except ray.exceptions.RayError as exc:  # lost with its worker or node
            reason = call.reason if call.reason == BLOCKED else type(exc).__name__
            return self._resubmit(call, reason)
        return _after_loss(decode(value).records[0], call)

    def look(self) -> None:
        """Kill the actors whose loop a runner blocks (their collections then fail as lost)."""
        for index in self.watch.look(self.pool.actors, self.calls()):
            self.pool.replace(index)

    def expired(self) -> Iterator[RecordBatch]:
        """Solo tasks past their limit (:func:`~.ray_watch.solo_limit`; an actor's runs time
        out inside the actor).
        """
        timeout_s = self.pool.timeout_s
        if timeout_s is None and not self.watch.given_up:
            return  # no solo task can expire
        now = time.monotonic()
        late = [
            ref
            for ref, call in self.solos.items()
            if (limit := solo_limit(call.reason, timeout_s)) is not None
            and now - call.submitted > limit
        ]
        # finished in time, its result perhaps still on another node: the next wait reads it
        done = set(self._ready(late, timeout=0, fetch_local=False))
        for ref in late:
            if ref in done:
                continue
            call = self.solos[ref]
            self.ray.cancel(ref, force=True)
            del self.solos[ref]
            elapsed = now - call.submitted
            if call.reason == BLOCKED:
                yield RecordBatch((solo_blocked_record(call.ctx, timeout_s, elapsed, call.lost),))
                continue
            msg = f"run exceeded timeout_s={timeout_s:g} and was cancelled"
            yield RecordBatch((failed_record(call.ctx, "RunTimeout", msg, elapsed),))

    def stop(self) -> Iterator[RecordBatch]:
        """Records of what finished before the stop; the rest is cancelled (a resume runs it).

        Each actor cancels its runs and hands over what finished (its outstanding collection
        may hand some over instead); a solo task counts only if it is already done.
        """
        ray = self.ray
        channel = self.channel or None  # the only driver: stop every run; else only ours
        asked = [b.actor.stop.remote(channel) for b in self.boxes.values() if b.calls]
        refs = [*asked, *self.collects]
        ready = ray.wait(refs, num_returns=len(refs), timeout=STOP_WAIT_S)[0] if refs else []
        if self.solos:
            ready += ray.wait(list(self.solos), num_returns=len(self.solos), timeout=0)[0]
        for ref in ready:
            with contextlib.suppress(Exception):  # lost or cancelled meanwhile: a resume runs it
                decoded = decode(ray.get(ref, timeout=STOP_WAIT_S))
                if ref in self.solos:  # a solo task's record says it was lost before
                    yield RecordBatch((_after_loss(decoded.records[0], self.solos[ref]),))
                elif decoded.records:
                    yield RecordBatch(decoded.records, decoded.lines)
        for ref in self.solos:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        self.boxes.clear()
        self.collects.clear()
        self.solos.clear()
        self.suspects.clear()  # never started: a resume runs them


def _after_loss(record: RunRecord, call: _Call) -> RunRecord:
    """A solo task's record, saying how often the run was lost and why."""
    return record.model_copy(update={"infra_retries": call.lost, "infra_error": call.reason})


def _actor_errors(ray: Any) -> tuple[type[BaseException], ...]:
    """Errors that mean the actor is gone (``ActorUnavailableError`` is new in Ray 2.3x)."""
    found = [ray.exceptions.RayActorError]
    unavailable = getattr(ray.exceptions, "ActorUnavailableError", None)
    if unavailable is not None:
        found.append(unavailable)
    return tuple(found)


def run_on_pool(
    executor: Any,
    pool: ActorPool,
    feed: RunFeed,
    solo_task: Any,
    infra_retries: int,
    channel: str = "",
) -> Iterator[RecordBatch]:
    """Feed ``pool`` until the feed is empty and nothing is in flight; yield record batches.
    ``channel``: this driver's name on actors other drivers share (empty: the only one).
    """
    drive = _Drive(pool, solo_task, infra_retries, channel)
    cap = pool.concurrency + SLACK_PER_WORKER * pool.workers
    while True:
        if executor.stop_requested:
            feed.close()
            yield from drive.stop()
            return
        room = cap - drive.in_flight
        if room > 0:
            feed.top_up(room)
            taken = feed.take(room)
            if taken:
                drive.hand_over(list(taken))
        if not drive.in_flight:
            return
        drive.ask()
        pool.poll_summary()
        yield from drive.wait()
        drive.look()
        yield from drive.expired()
        drive.launch()
