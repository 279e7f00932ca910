"""Overlapping runs on Ray: a few long-lived worker actors, each running many runs at once.

Ray starts a worker process in 0.5-1 s and ~90 MB, so one process per run in flight does not
scale to API-bound runners. Instead the executor starts one async actor per CPU of the cluster
(half a CPU each, spread over the nodes), and each actor runs its share of the sweep's
``concurrency`` on its event loop (``async def`` runners) or its thread pool (sync runners)
through a :class:`~counterfact.orchestrator.engine.gate.Gate`. One more actor, the
:class:`ThrottleHost`, holds the sweep's single
:class:`~counterfact.orchestrator.engine.throttle.Throttle` for every worker on every node.

The driver keeps at most ``concurrency`` plus a few runs submitted (backpressure), each to the
least-loaded live actor, and yields each record as its call returns. Faults:

- an actor that dies (its process exits, its node is lost) fails every call it held; the actor
  is replaced, and each of those runs is resubmitted *alone*, as a plain Ray task
  (``ray_exec.ray_batch``), so only a run that kills its own process is recorded as failed
  (after ``infra_retries`` losses, as on the task path);
- ``timeout_s`` is enforced inside the actor (an async run is cancelled; the worker lives on);
- a stop (Ctrl-C, SIGTERM, a budget) cancels what is in flight; nothing cancelled is recorded.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from counterfact.orchestrator.engine.arun import RunCore
from counterfact.orchestrator.engine.feed import RunFeed
from counterfact.orchestrator.engine.gate import Gate
from counterfact.orchestrator.engine.loader import RunnerRef, resolve_runner
from counterfact.orchestrator.engine.throttle import Allowance, Throttle
from counterfact.orchestrator.engine.worker import RetryPolicy, failed_record
from counterfact.probes.records import RunRecord
from counterfact.probes.runner import RunContext

SLACK_PER_WORKER = 4
"""Runs submitted beyond ``concurrency`` per worker, so none idles between two calls."""
ACTOR_CPUS = 0.5
"""CPU each worker actor reserves: half, so solo tasks (lost runs) always find room."""
_POLL_S = 0.1


class ThrottleHost:
    """The sweep's throttle, as a Ray actor every worker reports to."""

    def __init__(self, ceiling: int, per_minute: float | None) -> None:
        self.throttle = Throttle(ceiling, per_minute)

    def report(self, refused: int, served: int) -> Allowance:
        """A worker's counts since its last report; the sweep's allowance back."""
        return self.throttle.report(refused, served)

    def summary(self) -> dict[str, object]:
        """How the limit moved."""
        return self.throttle.summary()


class PoolWorker:
    """One worker process: runs many runs at once on its event loop (a Ray async actor)."""

    def __init__(
        self,
        runner: RunnerRef,
        policy: RetryPolicy,
        throttle: Any,
        start: Allowance,
        *,
        share: float,
        threads: int,
        timeout_s: float | None,
    ) -> None:
        import ray

        self.node = ray.get_runtime_context().get_node_id()

        async def link(refused: int, served: int) -> Allowance:
            allowance: Allowance = await throttle.report.remote(refused, served)
            return allowance

        gate = Gate(link, start, share)
        self.core = RunCore(
            resolve_runner(runner),
            gate,
            policy,
            threads=threads,
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
        self.throttle = ray.remote(num_cpus=0)(ThrottleHost).remote(concurrency, per_minute)
        self._start = Allowance(concurrency, per_minute)
        self._cls = ray.remote(num_cpus=ACTOR_CPUS, max_restarts=0, max_task_retries=0)(PoolWorker)
        self.actors: list[Any] = [self._spawn() for _ in range(self.workers)]
        self.load = [0] * self.workers

    def _spawn(self) -> Any:
        share = 1.0 / self.workers
        return self._cls.options(
            scheduling_strategy="SPREAD",
            max_concurrency=self.concurrency + SLACK_PER_WORKER * self.workers + 16,
        ).remote(
            self.runner_ref,
            self.policy,
            self.throttle,
            self._start,
            share=share,
            threads=-(-self.concurrency // self.workers) + 1,
            timeout_s=self.timeout_s,
        )

    def replace(self, index: int) -> None:
        """A dead actor's slot gets a new actor."""
        self.ray.kill(self.actors[index], no_restart=True)
        self.actors[index] = self._spawn()

    def submit(self, ctx: RunContext) -> tuple[Any, _Call]:
        """Send a run to the least-loaded actor."""
        index = min(range(self.workers), key=self.load.__getitem__)
        self.load[index] += 1
        actor = self.actors[index]
        return actor.run.remote(ctx), _Call(ctx, index, submitted=time.monotonic(), actor=actor)

    def summary(self) -> dict[str, object] | None:
        """The throttle's record (None when it cannot be read)."""
        try:
            summary: dict[str, object] = self.ray.get(self.throttle.summary.remote(), timeout=10)
        except Exception:
            return None
        return summary

    def close(self) -> None:
        """Kill the actors (their runs were recorded or cancelled)."""
        for actor in [*self.actors, self.throttle]:
            with contextlib.suppress(Exception):
                self.ray.kill(actor, no_restart=True)


def run_on_pool(
    executor: Any, pool: ActorPool, feed: RunFeed, solo_task: Any, infra_retries: int
) -> Iterator[RunRecord]:
    """Feed ``pool`` until the feed is empty and nothing is in flight; yield records."""
    ray = pool.ray
    pending: dict[Any, _Call] = {}
    cap = pool.concurrency + SLACK_PER_WORKER * pool.workers
    while True:
        if executor.stop_requested:
            feed.close()
            _cancel(ray, pending)
            return
        if len(pending) < cap:
            feed.top_up(cap - len(pending))
            for ctx in feed.take(cap - len(pending)):
                ref, call = pool.submit(ctx)
                pending[ref] = call
        if not pending:
            return
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=_POLL_S)
        if ready:
            rest = [r for r in pending if r not in set(ready)]
            more, _ = ray.wait(rest, num_returns=len(rest), timeout=0) if rest else ([], [])
            ready = [*ready, *more]
        for ref in ready:
            call = pending.pop(ref)
            if call.worker >= 0:
                pool.load[call.worker] -= 1
            record = _outcome(ray, ref, call, pool, pending, solo_task, infra_retries)
            if record is not None:
                yield record
        yield from _expired(ray, pending, pool.timeout_s)


def _outcome(
    ray: Any,
    ref: Any,
    call: _Call,
    pool: ActorPool,
    pending: dict[Any, _Call],
    solo_task: Any,
    infra_retries: int,
) -> RunRecord | None:
    """The record of a finished call, or None when it was resubmitted alone."""
    try:
        value = ray.get(ref)
    except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError) as exc:
        if call.worker >= 0 and pool.actors[call.worker] is call.actor:
            pool.replace(call.worker)
        return _resubmit(ray, call, exc, pending, solo_task, pool, infra_retries)
    except ray.exceptions.RayTaskError as exc:
        return failed_record(call.ctx, type(exc).__name__, str(exc)[:500], 0.0)
    except ray.exceptions.RayError as exc:  # a solo task lost with its worker or node
        return _resubmit(ray, call, exc, pending, solo_task, pool, infra_retries)
    records: list[RunRecord] = value if isinstance(value, list) else [value]
    record = records[0]
    if call.lost:
        record = record.model_copy(update={"infra_retries": call.lost, "infra_error": call.reason})
    return record


def _resubmit(
    ray: Any,
    call: _Call,
    exc: BaseException,
    pending: dict[Any, _Call],
    solo_task: Any,
    pool: ActorPool,
    infra_retries: int,
) -> RunRecord | None:
    """A run lost with its worker: run it again alone, or record it as failed at the limit."""
    lost = call.lost + 1
    reason = type(exc).__name__
    if lost > infra_retries + 1:
        record = failed_record(call.ctx, reason, "its worker died on every try", 0.0)
        return record.model_copy(update={"infra_retries": call.lost, "infra_error": reason})
    ref = solo_task.remote(pool.runner_ref, [call.ctx], pool.policy)
    pending[ref] = _Call(call.ctx, -1, lost, reason, time.monotonic())
    return None


def _expired(ray: Any, pending: dict[Any, _Call], timeout_s: float | None) -> Iterator[RunRecord]:
    """Solo tasks past ``timeout_s`` (actor calls time out inside the actor)."""
    if timeout_s is None:
        return
    now = time.monotonic()
    for ref, call in list(pending.items()):
        if call.worker < 0 and now - call.submitted > timeout_s:
            ray.cancel(ref, force=True)
            del pending[ref]
            msg = f"run exceeded timeout_s={timeout_s:g} and was cancelled"
            yield failed_record(call.ctx, "RunTimeout", msg, now - call.submitted)


def _cancel(ray: Any, pending: dict[Any, _Call]) -> None:
    """Cancel what is in flight (not recorded: a resume runs it)."""
    for ref, call in pending.items():
        with contextlib.suppress(Exception):
            ray.cancel(ref, force=call.worker < 0)
    pending.clear()
