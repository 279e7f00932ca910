"""Overlapping runs on Ray: a few long-lived worker actors, each running many runs at once.

Ray starts a worker process in 0.5-1 s and ~90 MB, so one process per run in flight does not
scale to API-bound runners. Instead the executor starts one async actor per CPU of the cluster
(half a CPU each, spread over the nodes), and each actor runs its share of the sweep's
``concurrency`` on its event loop (``async def`` runners) or its thread pool (sync runners)
through a :class:`~counterfact.orchestrator.engine.allowance.Gate`. One more actor, the
:class:`ThrottleHost`, holds the sweep's single
:class:`~counterfact.orchestrator.engine.throttle.Throttle` for every worker on every node.

The driver keeps at most ``concurrency`` plus a few runs submitted (backpressure), each to the
least-loaded live actor, and yields each record as its call returns. Faults:

- the actors must answer before the first run is sent: a runner that cannot be imported on the
  workers is one clear error, not a loop of dead actors;
- an actor that dies (its process exits, its node is lost) fails every call it held; the actor
  is replaced while the cluster still has a CPU for it (else the pool shrinks), and each of those
  runs is resubmitted *alone*, as a plain Ray task (``ray_exec.ray_batch``, reserving no CPU so
  it is never stuck behind the actors), so only a run that kills its own process is recorded as
  failed (the first loss is not counted: it may be a neighbour's fault; then ``infra_retries``);
- the throttle actor lives on the driver's node, so losing a worker node never loses the limit;
- ``timeout_s`` is enforced inside the actor (an async run is cancelled; the worker lives on);
  an actor whose loop a runner blocks, so that no timeout can fire, is noticed, killed and
  replaced, and its runs take the lost-worker path (:mod:`.ray_watch`);
- a stop (Ctrl-C, SIGTERM) records what already finished and cancels the rest; nothing cancelled
  is recorded (a resume runs it). A budget only stops new runs: those in flight finish.
"""

from __future__ import annotations

import contextlib
import math
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from counterfact.exceptions import ExecutorError
from counterfact.orchestrator.engine.allowance import Gate
from counterfact.orchestrator.engine.arun import RunCore
from counterfact.orchestrator.engine.executors.handover import decode, ship
from counterfact.orchestrator.engine.executors.ray_watch import (
    BLOCKED,
    ActorWatch,
    solo_blocked_record,
    solo_limit,
)
from counterfact.orchestrator.engine.feed import RunFeed
from counterfact.orchestrator.engine.loader import RunnerRef, resolve_runner
from counterfact.orchestrator.engine.loopwatch import blocked_after
from counterfact.orchestrator.engine.throttle import Allowance, Throttle, ThrottleNow
from counterfact.orchestrator.engine.worker import RetryPolicy, failed_record
from counterfact.probes.runner import RunContext
from counterfact.records.runs import RunRecord

SLACK_PER_WORKER = 4
"""Runs submitted beyond ``concurrency`` per worker, so none idles between two calls."""
ACTOR_CPUS = 0.5
"""CPU each worker actor reserves: half, so solo tasks (lost runs) always find room."""
_POLL_S = 0.1
RETIRED = 10**9
"""The load of a retired slot: never the least loaded."""
READY_TIMEOUT_S = 120.0
"""How long the worker actors may take to start (Ray starts a process in 0.5-1 s each)."""
SUMMARY_EVERY_S = 1.0
"""How often the driver reads the throttle's record during a sweep (kept if the throttle is
lost)."""
WAIT_FRACTION = 50
"""The driver collects finished runs once a fiftieth of those in flight are done (at most 2%
of the slots sit idle between two collections)."""


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
    """One worker process: runs many runs at once on its event loop (a Ray async actor)."""

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

        gate = Gate(link, start, index, workers)
        self.core = RunCore(
            resolve_runner(runner),
            gate,
            policy,
            timeout_s=timeout_s,
            node=self.node,
        )

    async def ready(self) -> str:
        """The node this worker runs on (answers once it is up)."""
        return str(self.node)

    async def run(self, ctx: RunContext) -> RunRecord:
        """One run to its record."""
        return await self.core.run(ctx)


@dataclass
class _Call:
    ctx: RunContext
    worker: int
    """Index of the actor it runs on; -1 for a solo task."""
    lost: int = 0
    reason: str | None = None
    submitted: float = 0.0
    actor: Any = None
    """The actor it was sent to (a dead one is replaced once, by its first failed call)."""


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
    ) -> None:
        self.ray = ray
        self.runner_ref = runner_ref
        self.policy = policy
        self.concurrency = concurrency
        self.workers = max(1, min(workers, concurrency))
        self.timeout_s = timeout_s
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        host = ray.remote(num_cpus=0, max_restarts=-1)(ThrottleHost)
        self.throttle = host.options(scheduling_strategy=here).remote(concurrency, per_minute)
        self._start = Allowance(concurrency, per_minute)
        self._cls = ray.remote(num_cpus=ACTOR_CPUS, max_restarts=0, max_task_retries=0)(PoolWorker)
        self._known: tuple[str, dict[str, object]] | None = None
        """The throttle's last record read, and the instance it came from."""
        self._asked: Any = None
        self._asked_at = -math.inf
        self.actors: list[Any] = [self._spawn(i) for i in range(self.workers)]
        self.load = [0] * self.workers
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
            workers=self.workers,
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

    def replace(self, index: int) -> None:
        """A dead actor's slot gets a new actor while the cluster has a CPU for it; else the
        slot is retired (its runs go to the others).
        """
        with contextlib.suppress(Exception):
            self.ray.kill(self.actors[index], no_restart=True)
        alive = sum(a is not None for a in self.actors) - 1
        cpus = self.ray.available_resources().get("CPU", 0.0)
        if alive > 0 and cpus < ACTOR_CPUS:
            self.actors[index] = None
            self.load[index] = RETIRED
            return
        self.actors[index] = self._spawn(index)

    def submit(self, ctx: RunContext) -> tuple[Any, _Call]:
        """Send a run to the least-loaded actor."""
        index = min(range(self.workers), key=self.load.__getitem__)
        self.load[index] += 1
        actor = self.actors[index]
        return actor.run.remote(ctx), _Call(ctx, index, submitted=time.monotonic(), actor=actor)

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


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


def run_on_pool(
    executor: Any, pool: ActorPool, feed: RunFeed, solo_task: Any, infra_retries: int
) -> Iterator[RunRecord]:
    """Feed ``pool`` until the feed is empty and nothing is in flight; yield records."""
    ray = pool.ray
    pending: dict[Any, _Call] = {}
    watch = ActorWatch(ray, blocked_after(pool.timeout_s))
    cap = pool.concurrency + SLACK_PER_WORKER * pool.workers
    while True:
        if executor.stop_requested:
            feed.close()
            yield from _finished_before_stop(ray, pending)
            _cancel(ray, pending)
            return
        if len(pending) < cap:
            feed.top_up(cap - len(pending))
            for ctx in feed.take(cap - len(pending)):
                ref, call = pool.submit(ctx)
                pending[ref] = call
        if not pending:
            return
        pool.poll_summary()
        # wait for a fiftieth of what is in flight (or _POLL_S): each call to ray.wait costs
        # O(in flight), so at 1,000 in flight one call per finished run would be the bottleneck
        wanted = max(1, len(pending) // WAIT_FRACTION)
        ready, _ = ray.wait(list(pending), num_returns=wanted, timeout=_POLL_S)
        for ref in ready:
            call = pending.pop(ref)
            if call.worker >= 0:
                pool.load[call.worker] -= 1
            record = _outcome(ray, ref, call, pool, pending, solo_task, infra_retries, watch)
            if record is not None:
                yield record
        for index in watch.look(pool.actors, pending.values()):
            pool.replace(index)  # its calls fail as lost, and run again alone
        if pool.timeout_s is not None or watch.given_up:  # else no solo task can expire
            yield from _expired(ray, pending, pool.timeout_s)


def _finished_before_stop(ray: Any, pending: dict[Any, _Call]) -> Iterator[RunRecord]:
    """Records of runs already done when a stop came (they are not run again on resume)."""
    if not pending:
        return
    ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=0)
    for ref in ready:
        pending.pop(ref)
        try:
            value = ray.get(ref, timeout=5)
        except Exception:  # lost or cancelled meanwhile: a resume runs it
            continue
        yield _record_of(value)


def _outcome(
    ray: Any,
    ref: Any,
    call: _Call,
    pool: ActorPool,
    pending: dict[Any, _Call],
    solo_task: Any,
    infra_retries: int,
    watch: ActorWatch,
) -> RunRecord | None:
    """The record of a finished call, or None when it was resubmitted alone."""
    try:
        value = ray.get(ref)
    except _actor_errors(ray) as exc:
        if call.worker >= 0 and pool.actors[call.worker] is call.actor:
            pool.replace(call.worker)
        reason = BLOCKED if watch.blocked(call.actor) else type(exc).__name__
        return _resubmit(ray, call, reason, pending, solo_task, pool, infra_retries)
    except ray.exceptions.RayTaskError as exc:
        return failed_record(call.ctx, type(exc).__name__, str(exc)[:500], 0.0)
    except ray.exceptions.RayError as exc:  # a solo task lost with its worker or node
        reason = call.reason if call.reason == BLOCKED else type(exc).__name__
        return _resubmit(ray, call, reason, pending, solo_task, pool, infra_retries)
    record = _record_of(value)
    if call.lost:
        record = record.model_copy(update={"infra_retries": call.lost, "infra_error": call.reason})
    return record


def _record_of(value: RunRecord | bytes) -> RunRecord:
    """An actor call's record, or the one record of a solo task's lines."""
    return decode(value).records[0] if isinstance(value, bytes) else value


def _actor_errors(ray: Any) -> tuple[type[BaseException], ...]:
    """Errors that mean the actor is gone (``ActorUnavailableError`` is new in Ray 2.3x)."""
    found = [ray.exceptions.RayActorError]
    unavailable = getattr(ray.exceptions, "ActorUnavailableError", None)
    if unavailable is not None:
        found.append(unavailable)
    return tuple(found)


def _resubmit(
    ray: Any,
    call: _Call,
    reason: str,
    pending: dict[Any, _Call],
    solo_task: Any,
    pool: ActorPool,
    infra_retries: int,
) -> RunRecord | None:
    """A run lost with its worker (``reason``: the loss, an error's type name): run it again
    alone, or record it as failed at the limit.
    """
    lost = call.lost + 1
    if lost > infra_retries + 1:  # the first loss, beside other runs, is not held against it
        record = failed_record(call.ctx, reason, "its worker died on every try", 0.0)
        return record.model_copy(update={"infra_retries": lost, "infra_error": reason})
    ref = solo_task.options(num_cpus=0).remote(pool.runner_ref, ship([call.ctx]), pool.policy)
    pending[ref] = _Call(call.ctx, -1, lost, reason, time.monotonic())
    return None


def _expired(ray: Any, pending: dict[Any, _Call], timeout_s: float | None) -> Iterator[RunRecord]:
    """Solo tasks past their limit (:func:`~.ray_watch.solo_limit`; actor calls time out
    inside the actor).
    """
    now = time.monotonic()
    for ref, call in list(pending.items()):
        limit = solo_limit(call.reason, timeout_s) if call.worker < 0 else None
        if limit is None or now - call.submitted <= limit:
            continue
        ray.cancel(ref, force=True)
        del pending[ref]
        elapsed = now - call.submitted
        if call.reason == BLOCKED:
            yield solo_blocked_record(call.ctx, timeout_s, elapsed, call.lost)
            continue
        msg = f"run exceeded timeout_s={timeout_s:g} and was cancelled"
        yield failed_record(call.ctx, "RunTimeout", msg, elapsed)


def _cancel(ray: Any, pending: dict[Any, _Call]) -> None:
    """Cancel what is in flight (not recorded: a resume runs it)."""
    for ref, call in pending.items():
        with contextlib.suppress(Exception):
            ray.cancel(ref, force=call.worker < 0)
    pending.clear()
