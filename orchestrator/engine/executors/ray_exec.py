"""The Ray executor. Ray is imported only here.

Runs travel in batches (one Ray task runs several runs in order) so that fast runners are not
dominated by per-task overhead. The batch size adapts: each task aims at ``target_task_s`` of
runner time, judged from the durations of runs already finished, and is capped so the tail of
the plan still spreads over every worker. At most ``max_in_flight`` runs are submitted and not yet
finished, each task at most an equal share of them (when the limit binds, every task gets the
same, not one task all of it and the others a run each); finished tasks are collected with
``ray.wait`` and their records yielded at once.

Faults:

- a task lost to a dead worker or node is resubmitted by this driver (Ray's own task retries are
  off, so records can say so: ``infra_retries``, ``infra_error``) up to ``infra_retries`` times,
  into a free slot only, after re-counting the cluster's CPUs (with ``timeout_s``, a task
  waiting behind a dead node's share of work would otherwise run out its clock);
  if it still fails, a batch is split and each of its runs resubmitted alone (with a fresh
  budget), so only the run that kills its worker (``os._exit``, a segfault, OOM) is recorded as
  failed; while stopping, a lost task is recorded as nothing (a resume runs it);
- with ``timeout_s``, every run is its own task and at most one task per worker is in flight, so
  a task starts when submitted; a task older than ``timeout_s`` is cancelled (its worker killed)
  and recorded as a ``RunTimeout`` error;
- :meth:`request_stop` (Ctrl-C) stops submitting, waits up to ``stop_grace_s`` for runs in
  flight, cancels the rest (not recorded: a resume runs them) and ends the stream.
"""

from __future__ import annotations

import logging
import math
import os
import re
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from counterfact.exceptions import ExecutorError
from counterfact.orchestrator.engine.calling.aborting import reinstall
from counterfact.orchestrator.engine.calling.worker import (
    RetryPolicy,
    failed_record,
)
from counterfact.orchestrator.engine.executors.base import Executor, RecordBatch, SharedSlots
from counterfact.orchestrator.engine.executors.feed import RunFeed, as_feed
from counterfact.orchestrator.engine.executors.handover import Shipment, decode, run_shipment, ship
from counterfact.orchestrator.engine.executors.options import ExecutorOptions
from counterfact.orchestrator.engine.executors.ray_address import (
    CONNECT_TIMEOUT_S,
    ENV,
    check_reachable,
    env_address,
    join_bounded,
)
from counterfact.orchestrator.engine.executors.ray_drive import run_on_pool
from counterfact.orchestrator.engine.executors.ray_pool import ActorPool
from counterfact.orchestrator.engine.executors.ray_ship import init_runtime_env, shipped
from counterfact.orchestrator.engine.loading.loader import RunnerRef
from counterfact.orchestrator.engine.pacing.throttle import ThrottleNow
from counterfact.probes.runner import RunContext
from counterfact.records.runs import RunRecord

_POLL_S = 0.25


def batch_size(
    mean_run_s: float | None,
    queued: int,
    workers: int,
    room: int,
    *,
    target_task_s: float,
    max_batch: int,
) -> int:
    """How many runs the next task should carry (at least 1, at most ``room`` and ``queued``)."""
    if mean_run_s is None:
        size = 1
    else:
        size = int(target_task_s / max(mean_run_s, 1e-6))
        size = min(size, max_batch, math.ceil(queued / (2 * max(workers, 1))))
    return max(1, min(size, room, queued))


@dataclass
class _Task:
    batch: list[RunContext]
    submitted: float
    lost: int = 0
    """Times these runs' tasks were lost with a dead worker or node (reported in records)."""
    reason: str | None = None
    """The error that lost them last."""
    tries: int = 0
    """Resubmissions of this very task (the ``infra_retries`` budget; a split starts anew)."""


Queued = tuple[RunContext, int, str | None]
"""A run split out of a failed batch, waiting for a task of its own: context, times lost, last
loss."""


def ray_batch(runner: RunnerRef, shipment: Shipment, policy: RetryPolicy) -> bytes:
    """One Ray task: the batch, each record stamped with the node it ran on, as its lines
    (:mod:`~counterfact.orchestrator.engine.executors.handover`).
    """
    import ray

    return run_shipment(runner, shipment, policy, ray.get_runtime_context().get_node_id())


def _stamp(batch: RecordBatch, item: _Task) -> RecordBatch:
    """Records of runs whose earlier task was lost say how often and why (their lines are then
    made anew by the store).
    """
    if not item.lost:
        return batch
    update = {"infra_retries": item.lost, "infra_error": item.reason}
    return RecordBatch([r.model_copy(update=update) for r in batch.records])


TARGET_TASK_S = 0.25
"""Runner time one task aims at: long enough that Ray's cost per task (a few ms of driver and
worker CPU on a small machine) is ~1% of it, short enough that the end of a sweep still spreads
(tasks shrink as the queue drains, :func:`batch_size`)."""
MAX_BATCH = 256
"""Runs one task carries at most (an instant runner's task then takes ~20 ms)."""


TASKS_PER_WORKER = 3
"""Tasks kept submitted per worker: enough that none idles between tasks, few enough that runs
queued meanwhile gather into full batches (a sequential sweep queues a few runs at a time)."""


MIN_TASKS = 8
"""Tasks kept submitted at least, whatever the CPU count: an autoscaling head that reports no
CPUs still sees demand, and new nodes get work before the next count."""
RECOUNT_S = 5.0
"""How often the cluster's CPUs are counted again (nodes join and leave during a sweep)."""


@dataclass
class _Slots:
    """The cluster's workers and how many tasks may be submitted and unfinished at once."""

    solo_only: bool
    workers: int = 1
    max_tasks: int = 1
    counted: float = -math.inf

    def refresh(self, ray: Any, *, force: bool = False) -> None:
        """Count the cluster's CPUs again when :data:`RECOUNT_S` passed (or ``force``)."""
        now = time.monotonic()
        if not force and now - self.counted < RECOUNT_S:
            return
        self.counted = now
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        if self.solo_only:
            self.max_tasks = self.workers  # under timeout_s a task must start when submitted
        else:
            # tasks, not runs: ``max_in_flight`` caps runs, where runs are submitted
            self.max_tasks = max(TASKS_PER_WORKER * self.workers, MIN_TASKS)


ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
"""Terminal colour codes, which Ray puts into its task errors (``\x1b[36mray::ray_batch()``)."""


def _task_failure(exc: BaseException) -> tuple[str, str, str | None]:
    """A failed task's error for its record: the cause's type and message (Ray wraps it in a
    ``RayTaskError`` whose first line is only the task's name), and the traceback, colourless.
    """
    cause = getattr(exc, "cause", None)
    trace = ANSI.sub("", str(exc))[-4000:] or None
    if isinstance(cause, BaseException):
        return type(cause).__name__, ANSI.sub("", _first_line(cause)), trace
    return type(exc).__name__, ANSI.sub("", _first_line(exc)), trace


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:500] if text else type(exc).__name__


class RayExecutor(Executor):
    """Fans runs out over Ray workers; starts a local Ray instance when no address is given
    (and ``RAY_ADDRESS`` is not set: then it joins that one).
    """

    def __init__(
        self,
        options: ExecutorOptions | None = None,
        *,
        stop_grace_s: float = 10.0,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        target_task_s: float = TARGET_TASK_S,
        max_batch: int = MAX_BATCH,
    ) -> None:
        super().__init__()
        self.options = options or ExecutorOptions()  # the ``executor:`` section, validated
        self.stop_grace_s = stop_grace_s
        self.connect_timeout_s = connect_timeout_s
        self._start_dir = os.getcwd()
        """Joining a cluster: the file runner's folder, shipped to every node (ray_ship)."""
        self.target_task_s = target_task_s
        self.max_batch = max_batch
        self._owned = False
        self._joined_env = False
        """Joined the cluster ``RAY_ADDRESS`` names (a file runner is shipped there too)."""
        self._actors: ActorPool | None = None
        """Worker actors for overlapping runs, started by the first run that needs them."""
        self.channel = ""
        """This executor's name on worker actors it shares with others (empty: its own)."""
        self.judge_share = False
        """Whether its actors keep a part of the limit for a judge in the driver."""

    def start_phase(self) -> str | None:
        """``starting Ray`` (a local instance) or ``joining Ray at ADDRESS``; None when this
        process already runs Ray.
        """
        import ray

        if ray.is_initialized():
            return None
        joining = self.joining()
        if joining is None:
            return "starting Ray"
        return (
            f"joining Ray at {joining} ({ENV})"
            if self.options.address is None
            else f"joining Ray at {joining}"
        )

    def start(self) -> None:
        """Start a local Ray instance, or join ``address`` (else ``RAY_ADDRESS``)."""
        self._ray()

    def joining(self) -> str | None:
        """The cluster address this executor joins: ``address``, else ``RAY_ADDRESS`` (None:
        it starts a local instance).
        """
        return self.options.address if self.options.address is not None else env_address()

    def _ray(self) -> Any:
        import ray

        if ray.is_initialized():
            return ray
        joining = self.joining()
        if joining is None:
            try:
                ray.init(
                    address="local",  # never a leftover cluster (see ray_address)
                    num_cpus=self.options.num_cpus,
                    include_dashboard=False,
                    logging_level=logging.ERROR,
                    log_to_driver=False,
                )
            except Exception as exc:
                msg = f"could not start a local Ray instance: {type(exc).__name__}: {exc}"
                raise ExecutorError(msg) from exc
        else:
            from_env = self._joined_env = self.options.address is None
            resolved = check_reachable(joining, self.connect_timeout_s, from_env=from_env)
            env = init_runtime_env(self.options.ship_dir)
            join_bounded(
                lambda: ray.init(
                    address=resolved,
                    runtime_env=env,
                    logging_level=logging.ERROR,
                    log_to_driver=False,
                ),
                resolved,
                self.options.join_timeout_s,
                from_env=from_env,
            )
        self._owned = True
        reinstall()  # ray.init put its own SIGTERM handler in place of the graceful stop's
        return ray

    def run(
        self, runner: RunnerRef, contexts: Sequence[RunContext] | RunFeed
    ) -> Iterator[RunRecord]:
        """Fan the contexts out as batched Ray tasks; yield records as tasks finish (Ray is
        started or joined only when there is something to run).
        """
        for batch in self.batches(runner, contexts):
            yield from batch.records

    def batches(
        self, runner: RunnerRef, contexts: Sequence[RunContext] | RunFeed
    ) -> Iterator[RecordBatch]:
        """:meth:`run`'s records, each task's together with the lines its worker made."""
        feed = as_feed(contexts)
        feed.top_up(1)
        if not feed:
            return
        ray = self._ray()
        # Retries of lost work are ours (not Ray's max_retries) so records can say so.
        task = ray.remote(num_cpus=1, max_retries=0)(ray_batch)
        workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        # decided on the driver's own copy: a shipped path exists only on the workers
        concurrency = self.options.pool.overlapping(runner, workers)
        if self.options.address is not None or self._joined_env:
            runner = shipped(runner, self.options.ship_dir, self._start_dir)
        if concurrency is not None:
            pool = self._pool_for(ray, runner, concurrency, workers)
            yield from run_on_pool(self, pool, feed, task, self.options.infra_retries, self.channel)
            return
        yield from self._run_tasks(ray, task, runner, feed)

    def _pool_for(self, ray: Any, runner: RunnerRef, concurrency: int, workers: int) -> ActorPool:
        """The worker actors (started once per executor: a bisection's probes share them)."""
        if self._actors is None:
            self._actors = ActorPool(
                ray,
                ray.put(runner),
                self.options.policy,
                concurrency=concurrency,
                per_minute=self.options.pool.per_minute,
                workers=workers,
                timeout_s=self.options.timeout_s,
                judge=self.judge_share,
            )
        return self._actors

    def slots_for_judge(self) -> Callable[[], SharedSlots | None]:
        """The judge's part of the runs' limit, from their throttle actor (reserved now: the
        actors started later split the limit with it).
        """
        self.judge_share = True
        return self.shared_slots

    def shared_slots(self) -> SharedSlots | None:
        """The judge's slots on the throttle actor (None before the actors started, or when
        they started without a part for it).
        """
        return None if self._actors is None else self._actors.judge_slots()

    def throttle_summary(self) -> dict[str, object] | None:
        """How the concurrency limit moved (None when runs did not overlap)."""
        return None if self._actors is None else self._actors.summary()

    def throttle_now(self) -> ThrottleNow | None:
        """The throttle actor's limit and refusals as last read (the driver reads its record
        about once a second anyway); None when runs did not overlap.
        """
        pool = self._actors
        return None if pool is None else pool.now()

    def _run_tasks(
        self, ray: Any, task: Any, runner: RunnerRef, feed: RunFeed
    ) -> Iterator[RecordBatch]:
        """One run per CPU: batched tasks (see the module docstring)."""
        runner_ref = ray.put(runner)
        solo_only = self.options.timeout_s is not None
        slots = _Slots(solo_only)
        queue: deque[Queued] = deque()  # runs split out of a failed batch: first in line
        retries: deque[_Task] = deque()  # lost tasks: first in line, but only into a free slot
        pending: dict[Any, _Task] = {}
        in_flight = 0
        mean_run_s: float | None = None
        stop_at: float | None = None
        while True:
            slots.refresh(ray)
            workers, max_tasks = slots.workers, slots.max_tasks
            if self.stop_requested and stop_at is None:
                stop_at = time.monotonic() + self.stop_grace_s
                queue.clear()
                feed.close()
                retries.clear()  # not recorded: a resume runs them
            if stop_at is None and len(pending) < 2 * workers:
                feed.top_up(2 * workers - len(pending))
            if not (queue or feed or pending or retries):
                return
            while retries and len(pending) < max_tasks:
                item = retries.popleft()
                item.submitted = time.monotonic()
                pending[task.remote(runner_ref, ship(item.batch), self.options.policy)] = item
                in_flight += len(item.batch)
            while (
                stop_at is None
                and (queue or feed)
                and in_flight < self.options.max_in_flight
                and len(pending) < max_tasks
            ):
                if mean_run_s is None and len(pending) >= 2 * workers:
                    break
                # each task an equal share of the limit (and no more than is left of it)
                share = max(1, self.options.max_in_flight // max_tasks)
                room = min(self.options.max_in_flight - in_flight, share)
                item = self._next_task(queue, feed, solo_only, mean_run_s, workers, room)
                if not item.batch:  # the budget closed the feed as it was asked
                    break
                pending[task.remote(runner_ref, ship(item.batch), self.options.policy)] = item
                in_flight += len(item.batch)
            if not pending:
                continue
            done, _ = ray.wait(list(pending), num_returns=1, timeout=_POLL_S)
            for ref in done:
                item = pending.pop(ref)
                batch, retry = self._result(ray, ref, item, queue, stop_at is not None)
                if retry is not None:
                    retries.append(retry)
                    slots.refresh(ray, force=True)  # a node may be gone: count again
                durations = [r.duration_s for r in batch.records if r.duration_s > 0]
                if durations:
                    latest = sum(durations) / len(durations)
                    mean_run_s = latest if mean_run_s is None else 0.7 * mean_run_s + 0.3 * latest
                if batch.records:
                    yield batch
            expired = list(self._expire(ray, pending))
            if expired:
                yield RecordBatch(expired)
            in_flight = sum(len(t.batch) for t in pending.values())
            if stop_at is not None and time.monotonic() >= stop_at:
                for ref in pending:
                    ray.cancel(ref, force=True)
                return

    def _result(
        self, ray: Any, ref: Any, item: _Task, queue: deque[Queued], stopping: bool
    ) -> tuple[RecordBatch, _Task | None]:
        """A finished task's records (stamped with any losses), and the task to resubmit when
        Ray lost it (see :meth:`_lost`); a lone run whose task failed is recorded as failed.
        """
        try:
            blob: bytes = ray.get(ref)
        except ray.exceptions.RayError as exc:
            retry = self._lost(exc, item, queue, stopping=stopping)
            lone = retry is None and len(item.batch) == 1 and not stopping
            kind, message, trace = _task_failure(exc)
            records = (
                [failed_record(c, kind, message, 0.0, trace=trace) for c in item.batch]
                if lone
                else []
            )
            return _stamp(RecordBatch(records), item), retry
        done = decode(blob)
        return _stamp(RecordBatch(done.records, done.lines), item), None

    def _next_task(
        self,
        queue: deque[Queued],
        feed: RunFeed,
        solo_only: bool,
        mean_run_s: float | None,
        workers: int,
        room: int,
    ) -> _Task:
        """The next task: a run split out of a failed batch first, else from the feed (alone
        under ``timeout_s``, else a batch sized by :func:`batch_size`).
        """
        if queue:
            ctx, lost, reason = queue.popleft()
            return _Task([ctx], time.monotonic(), lost, reason)
        if solo_only:
            return _Task(feed.take(1), time.monotonic())
        size = batch_size(
            mean_run_s,
            len(feed),
            workers,
            room,
            target_task_s=self.target_task_s,
            max_batch=self.max_batch,
        )
        return _Task(feed.take(size), time.monotonic())

    def _lost(
        self,
        exc: BaseException,
        item: _Task,
        queue: deque[Queued],
        *,
        stopping: bool,
    ) -> _Task | None:
        """A batch whose task failed in Ray: the task to resubmit (a worker or node died, and
        ``infra_retries`` allows), else None — then a batch of several is split into solo runs
        (queued) so that only the run at fault is recorded as failed. While stopping, nothing is
        resubmitted or recorded (innocent runs must not be marked failed: a resume runs them).
        """
        import ray

        if stopping:
            return None
        died = not isinstance(exc, ray.exceptions.RayTaskError)
        lost = item.lost + died
        reason = type(exc).__name__ if died else item.reason
        if died and item.tries < self.options.infra_retries:
            return _Task(item.batch, time.monotonic(), lost, reason, item.tries + 1)
        if len(item.batch) > 1:
            queue.extendleft((c, lost, reason) for c in reversed(item.batch))
        return None

    def _expire(self, ray: Any, pending: dict[Any, _Task]) -> Iterator[RunRecord]:
        """Cancel and record the tasks older than ``timeout_s``."""
        if self.options.timeout_s is None:
            return
        now = time.monotonic()
        for ref, item in list(pending.items()):
            if now - item.submitted <= self.options.timeout_s:
                continue
            ray.cancel(ref, force=True)
            del pending[ref]
            for ctx in item.batch:
                msg = f"run exceeded timeout_s={self.options.timeout_s:g} and was cancelled"
                yield failed_record(ctx, "RunTimeout", msg, now - item.submitted)

    def close(self) -> None:
        """Shut down the Ray instance this executor started (a joined cluster is left running)."""
        if self._actors is not None:
            self._actors.close()
            self._actors = None
        if self._owned:
            import ray

            ray.shutdown()
            self._owned = False
