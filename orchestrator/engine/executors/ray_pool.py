"""Overlapping runs on Ray: a few long-lived worker actors, each running many runs at once.

Ray starts a worker process in 0.5-1 s and ~90 MB, so one process per run in flight does not
scale to API-bound runners. Instead the executor starts one async actor per CPU of the cluster
(half a CPU each, spread over the nodes), and each actor runs its share of the sweep's
``concurrency`` on its event loop (``async def`` runners) or its thread pool (sync runners)
through a :class:`~counterfact.orchestrator.engine.pacing.allowance.WorkerSlots`. One more actor,
the :class:`ThrottleHost`, holds the sweep's single
:class:`~counterfact.orchestrator.engine.pacing.throttle.Throttle` for every worker on every node.

The driver (:mod:`.ray_drive`) keeps at most ``concurrency`` plus a few runs handed over
(backpressure), in batches to the least-loaded live actors, and collects finished records from
each actor in batches: a handful of actor calls per collection, not one per run. Faults:

- the actors must answer before the first run is sent: a runner that cannot be imported on the
  workers is one clear error, not a loop of dead actors;
- an actor that dies (its process exits, its node is lost) loses every run it held, finished
  and not yet collected ones too; the actor is replaced while the cluster still has a CPU for it
  (else the pool shrinks), and each of those runs is resubmitted *alone*, as a plain Ray task
  (``ray_exec.ray_batch``, reserving no CPU so it is never stuck behind the actors), so only a
  run that kills its own process is recorded as failed (the first loss is not counted: it may be
  a neighbour's fault; then ``infra_retries``, which the rerun of a run that had finished but
  was not yet collected also shows as 1);
- the throttle actor lives on the driver's node, so losing a worker node never loses the limit;
- a model judge of the runs' endpoint, in the driver, takes its calls' slots from the same
  throttle actor (:meth:`ActorPool.judge_slots`): it is one more holder of the limit beside the
  workers, worker ``index = workers`` of ``workers + 1``, so the runs and the judge together stay
  within it, share one requests-per-minute rate, and a 429 either meets cuts both;
- ``timeout_s`` is enforced inside the actor (an async run is cancelled; the worker lives on);
  an actor whose loop a runner blocks, so that no timeout can fire, is noticed, killed and
  replaced, and its runs take the lost-worker path (:mod:`.ray_watch`);
- a stop (Ctrl-C, SIGTERM) records what already finished and cancels the rest; nothing cancelled
  is recorded (a resume runs it). A budget only stops new runs: those in flight finish.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
import time
import uuid
from typing import Any

from counterfact.exceptions import ExecutorError
from counterfact.orchestrator.engine.calling.arun import FOREIGN_CANCEL, RunCore
from counterfact.orchestrator.engine.calling.loops import process_loop
from counterfact.orchestrator.engine.calling.worker import RetryPolicy, failed_record
from counterfact.orchestrator.engine.executors.base import SharedSlots
from counterfact.orchestrator.engine.executors.handover import Shipment, encode
from counterfact.orchestrator.engine.loading.loader import RunnerRef, resolve_runner
from counterfact.orchestrator.engine.pacing.allowance import WorkerSlots
from counterfact.orchestrator.engine.pacing.throttle import Allowance, Throttle, ThrottleNow
from counterfact.probes.runner import RunContext
from counterfact.records.runs import RunRecord

SLACK_PER_WORKER = 4
"""Runs submitted beyond ``concurrency`` per worker, so none idles between two calls."""
ACTOR_CPUS = 0.5
"""CPU each worker actor reserves: half, so solo tasks (lost runs) always find room."""
READY_TIMEOUT_S = 120.0
"""How long the worker actors may take to start (Ray starts a process in 0.5-1 s each)."""
SUMMARY_EVERY_S = 1.0
"""How often the driver reads the throttle's record during a sweep (kept if the throttle is
lost)."""


class ThrottleHost:
    """The sweep's throttle, as a Ray actor every worker reports to."""

    def __init__(self, ceiling: int, per_minute: float | None) -> None:
        self.throttle = Throttle(ceiling, per_minute)
        self.instance = uuid.uuid4().hex
        """Tells a restarted actor (a fresh throttle, its history gone) from the first."""

    def report(self, refused: int, served: int, stale: int) -> Allowance:
        """A worker's counts since its last report; the sweep's allowance back."""
        return self.throttle.report(refused, served, stale)

    def summary(self) -> tuple[str, dict[str, object]]:
        """This actor's instance and how the limit moved."""
        return self.instance, self.throttle.summary()


class PoolWorker:
    """One worker process: runs many runs at once on its event loop (a Ray async actor).

    The driver hands runs over in batches (:meth:`take`) and collects finished records in
    batches (:meth:`collect`, one call outstanding at a time): two actor calls per batch, not
    one per run, so the driver's share of Ray's per-call cost stays small at 1,000 in flight.
    """

    def __init__(
        self,
        runner: RunnerRef,
        policy: RetryPolicy,
        throttle: Any,
        start: Allowance,
        *,
        index: int,
        workers: int,
        timeout_s: float | None,
    ) -> None:
        import ray

        self.node = ray.get_runtime_context().get_node_id()

        async def link(refused: int, served: int, stale: int) -> Allowance:
            allowance: Allowance = await throttle.report.remote(refused, served, stale)
            return allowance

        slots = WorkerSlots(link, start, index, workers)
        self.core = RunCore(
            resolve_runner(runner),
            slots,
            policy,
            timeout_s=timeout_s,
            node=self.node,
        )
        self._running: dict[asyncio.Task[RunRecord], tuple[RunContext, str]] = {}
        """Each run in flight: its context and the channel it was handed over on."""
        self._done: dict[str, list[RunRecord]] = {}
        """Finished records not yet collected, by channel."""
        self._arrived: dict[str, asyncio.Event] = {}
        self._stopped: set[str | None] = set()
        """The channels :meth:`stop` stopped (None: every channel): a ``take`` arriving later on
        one starts nothing (a resume runs it)."""

    async def ready(self) -> str:
        """The node this worker runs on (answers once it is up; the blocked-loop watch's ping)."""
        return str(self.node)

    async def take(self, shipment: Shipment, channel: str = "") -> int:
        """Start every run of ``shipment`` on this loop; the runs now held. ``channel``: whose
        runs they are, when several drivers share these actors (``blame DIR``'s calls on Ray):
        each collects its own channel's records only.
        """
        if None in self._stopped or channel in self._stopped:  # calls may arrive out of order
            return 0
        loop = asyncio.get_running_loop()
        for ctx in shipment.contexts():
            task = loop.create_task(self._one(ctx))
            self._running[task] = (ctx, channel)
            task.add_done_callback(self._finished)
        return len(self._running)

    async def collect(self, want: int, wait_s: float, channel: str = "") -> bytes:
        """The records of ``channel`` finished since its last collection, as ``runs.jsonl``
        lines: once ``want`` are there, or after ``wait_s`` (then possibly none).
        """
        deadline = time.monotonic() + wait_s
        arrived = self._arrived.setdefault(channel, asyncio.Event())
        while len(self._done.get(channel, ())) < want and (left := deadline - time.monotonic()) > 0:
            arrived.clear()
            with contextlib.suppress(asyncio.TimeoutError):  # not TimeoutError before 3.11
                await asyncio.wait_for(arrived.wait(), left)
        return self._hand_over(channel)

    async def stop(self, channel: str | None = None) -> bytes:
        """Cancel every run in flight (a resume runs them), or only ``channel``'s; the records
        finished meanwhile (of every channel, or of ``channel``).
        """
        self._stopped.add(channel)
        if channel is None:
            self.core.stop()
        for task, (_, owner) in list(self._running.items()):
            if channel is None or owner == channel:
                task.cancel()
        for event in self._arrived.values():
            event.set()  # a collection waiting returns what is there
        if channel is not None:
            return self._hand_over(channel)
        return encode([r for owner in list(self._done) for r in self._take(owner)])

    def _hand_over(self, channel: str) -> bytes:
        return encode(self._take(channel))

    def _take(self, channel: str) -> list[RunRecord]:
        return self._done.pop(channel, [])

    async def _one(self, ctx: RunContext) -> RunRecord:
        try:
            return await self.core.run(ctx)
        except asyncio.CancelledError:  # the engine's stop (any other cancel is in the record)
            raise
        except BaseException as exc:  # the engine's own error around a run: still its record
            return failed_record(ctx, type(exc).__name__, str(exc)[:500], 0.0, str(self.node))

    def _finished(self, task: asyncio.Task[RunRecord]) -> None:
        ctx, channel = self._running.pop(task)
        if channel in self._stopped or (task.cancelled() and None in self._stopped):
            return  # the engine's stop: not recorded (a resume runs it)
        if task.cancelled():
            # cancelled before its first step (a runner cancelling every task on the loop):
            # RunCore never saw it, and a run never recorded kept the driver collecting forever
            record = failed_record(ctx, "RunCancelled", FOREIGN_CANCEL, 0.0, str(self.node))
        else:
            record = task.result()
        self._done.setdefault(channel, []).append(record)
        self._arrived.setdefault(channel, asyncio.Event()).set()


class ActorPool:
    """The worker actors and the throttle actor of one executor (kept across its runs)."""

    def __init__(
        self,
        ray: Any,
        runner_ref: Any,
        policy: RetryPolicy,
        *,
        concurrency: int,
        per_minute: float | None,
        workers: int,
        timeout_s: float | None,
        judge: bool = False,
    ) -> None:
        self.ray = ray
        self.runner_ref = runner_ref
        self.policy = policy
        self.concurrency = concurrency
        self.judge = judge
        """Whether a judge in the driver holds a part of the limit (:meth:`judge_slots`)."""
        self.workers = max(1, min(workers, concurrency - judge))
        self.holders = self.workers + judge
        """Who the limit is split between: the workers, and the judge when it shares it."""
        self.timeout_s = timeout_s
        self._judge_slots: SharedSlots | None = None
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        host = ray.remote(num_cpus=0, max_restarts=-1)(ThrottleHost)
        self.throttle = host.options(scheduling_strategy=here).remote(concurrency, per_minute)
        self._start = Allowance(concurrency, per_minute)
        self._cls = ray.remote(num_cpus=ACTOR_CPUS, max_restarts=0, max_task_retries=0)(PoolWorker)
        self._lock = threading.Lock()
        """Drivers sharing these actors (``blame DIR`` on Ray) replace a dead one once."""
        self._known: tuple[str, dict[str, object]] | None = None
        """The throttle's last record read, and the instance it came from."""
        self._asked: Any = None
        self._asked_at = -math.inf
        self.actors: list[Any] = [self._spawn(i) for i in range(self.workers)]
        """One per slot; None: the slot was retired (no CPU left for a replacement)."""
        self._ready()

    def _spawn(self, index: int) -> Any:
        return self._cls.options(
            scheduling_strategy="SPREAD",
            max_concurrency=self.concurrency + SLACK_PER_WORKER * self.workers + 16,
        ).remote(
            self.runner_ref,
            self.policy,
            self.throttle,
            self._start,
            index=index,
            workers=self.holders,
            timeout_s=self.timeout_s,
        )

    def _ready(self) -> None:
        """Wait until every actor is up; a runner its workers cannot load is one clear error."""
        try:
            self.ray.get([a.ready.remote() for a in self.actors], timeout=READY_TIMEOUT_S)
        except self.ray.exceptions.GetTimeoutError as exc:
            self.close()
            msg = (
                f"the {self.workers} worker processes for overlapping runs did not start within "
                f"{READY_TIMEOUT_S:.0f} s (is the cluster out of CPUs?)"
            )
            raise ExecutorError(msg) from exc
        except self.ray.exceptions.RayError as exc:
            self.close()
            text = str(exc).strip()
            last = text.splitlines()[-1][:500] if text else type(exc).__name__
            msg = f"the worker processes for overlapping runs failed to start: {last}"
            raise ExecutorError(msg) from exc

    def replace(self, index: int, dead: Any = None) -> None:
        """A dead actor's slot gets a new actor while the cluster has a CPU for it; else the
        slot is retired (its runs go to the others). ``dead``: the actor found dead; when the
        slot holds another by now (a driver sharing these actors replaced it), nothing is done.
        """
        with self._lock:
            if dead is not None and self.actors[index] is not dead:
                return
            with contextlib.suppress(Exception):
                self.ray.kill(self.actors[index], no_restart=True)
            alive = sum(a is not None for a in self.actors) - 1
            cpus = self.ray.available_resources().get("CPU", 0.0)
            if alive > 0 and cpus < ACTOR_CPUS:
                self.actors[index] = None
                return
            self.actors[index] = self._spawn(index)

    def judge_slots(self) -> SharedSlots | None:
        """The judge's part of the limit, on the driver's process loop, reporting to the throttle
        actor every worker reports to (None when the pool was started without one for it).
        """
        if not self.judge:
            return None
        held = self._judge_slots
        if held is None or not held.loop.alive:
            throttle = self.throttle

            async def link(refused: int, served: int, stale: int) -> Allowance:
                allowance: Allowance = await throttle.report.remote(refused, served, stale)
                return allowance

            slots = WorkerSlots(link, self._start, self.workers, self.holders)
            held = self._judge_slots = SharedSlots(slots, process_loop(), PoolThrottle(self))
        return held

    def poll_summary(self) -> None:
        """Read the throttle's record now and then (without waiting), so that a throttle lost
        later still leaves its last record.
        """
        if self._asked is not None:
            ready, _ = self.ray.wait([self._asked], timeout=0)
            if not ready:
                return
            with contextlib.suppress(Exception):
                self._keep(self.ray.get(self._asked))
            self._asked = None
        if time.monotonic() - self._asked_at >= SUMMARY_EVERY_S:
            self._asked_at = time.monotonic()
            with contextlib.suppress(Exception):
                self._asked = self.throttle.summary.remote()

    def _keep(self, read: tuple[str, dict[str, object]]) -> bool:
        """Keep ``read`` unless it comes from a restarted throttle; False then (lost)."""
        if self._known is not None and read[0] != self._known[0]:
            return False
        self._known = read
        return True

    def now(self) -> ThrottleNow | None:
        """The limit and refusals of the throttle's record last read by :meth:`poll_summary`
        (at most :data:`SUMMARY_EVERY_S` old; no call to the actor); None before the first.
        """
        known = self._known
        if known is None:
            return None
        read = known[1]
        return ThrottleNow(_int(read["final"]), _int(read["configured"]), _int(read["refusals"]))

    def summary(self) -> dict[str, object] | None:
        """The throttle's record; when the throttle was lost, the last one read, marked
        ``throttle_lost`` (None when it was never read).
        """
        try:
            read = self.ray.get(self.throttle.summary.remote(), timeout=10)
        except Exception:
            read = None
        if read is not None and self._keep(read):
            return dict(read[1])
        if self._known is None:
            return None
        return {**self._known[1], "throttle_lost": True}

    def close(self) -> None:
        """Kill the actors (their runs were recorded or cancelled)."""
        for actor in [*self.actors, self.throttle]:
            if actor is not None:
                with contextlib.suppress(Exception):
                    self.ray.kill(actor, no_restart=True)


class PoolThrottle:
    """The pool's throttle actor as a judge sharing it reads it (its record, :meth:`summary`)."""

    def __init__(self, pool: ActorPool) -> None:
        self.pool = pool

    def summary(self) -> dict[str, object] | None:
        """How the shared limit moved (the last record read, when the actor is lost)."""
        return self.pool.summary()


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0
