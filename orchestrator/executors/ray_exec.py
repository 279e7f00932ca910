"""The Ray executor. Ray is imported only here.

Runs travel in batches (one Ray task runs several runs in order) so that fast runners are not
dominated by per-task overhead. The batch size adapts: each task aims at ``target_task_s`` of
runner time, judged from the durations of runs already finished, and is capped so the tail of
the plan still spreads over every worker. At most ``max_in_flight`` runs are submitted and not yet
finished; finished tasks are collected with ``ray.wait`` and their records yielded at once.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

from counterfact.exceptions import ExecutorError
from counterfact.orchestrator.executors.base import Executor
from counterfact.orchestrator.imports import RunnerRef
from counterfact.orchestrator.worker import execute_batch, failed_record
from counterfact.probes.records import RunRecord
from counterfact.probes.runner import RunContext


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


class RayExecutor(Executor):
    """Fans runs out over Ray workers; starts a local Ray instance when no address is given."""

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        max_in_flight: int = 256,
        *,
        num_cpus: int | None = None,
        target_task_s: float = 0.1,
        max_batch: int = 256,
    ) -> None:
        self.address = address
        self.max_in_flight = max_in_flight
        self.num_cpus = num_cpus
        self.target_task_s = target_task_s
        self.max_batch = max_batch
        self._owned = False

    def start(self) -> None:
        self._ray()

    def _ray(self) -> Any:
        import ray

        if ray.is_initialized():
            return ray
        try:
            if self.address is None:
                ray.init(
                    num_cpus=self.num_cpus,
                    include_dashboard=False,
                    logging_level=logging.ERROR,
                    log_to_driver=False,
                )
            else:
                ray.init(address=self.address, logging_level=logging.ERROR, log_to_driver=False)
        except Exception as exc:
            where = "a local Ray instance" if self.address is None else f"{self.address!r}"
            msg = f"could not start or join {where}: {type(exc).__name__}: {exc}"
            raise ExecutorError(msg) from exc
        self._owned = True
        return ray

    def run(self, runner: RunnerRef, contexts: Sequence[RunContext]) -> Iterator[RunRecord]:
        ray = self._ray()
        task = ray.remote(num_cpus=1, max_retries=0)(execute_batch)
        runner_ref = ray.put(runner)
        workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        queue: deque[RunContext] = deque(contexts)
        pending: dict[Any, list[RunContext]] = {}
        in_flight = 0
        mean_run_s: float | None = None
        while queue or pending:
            while queue and in_flight < self.max_in_flight:
                if mean_run_s is None and len(pending) >= 2 * workers:
                    break
                size = batch_size(
                    mean_run_s,
                    len(queue),
                    workers,
                    self.max_in_flight - in_flight,
                    target_task_s=self.target_task_s,
                    max_batch=self.max_batch,
                )
                batch = [queue.popleft() for _ in range(size)]
                pending[task.remote(runner_ref, batch)] = batch
                in_flight += size
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                batch = pending.pop(ref)
                in_flight -= len(batch)
                try:
                    records: list[RunRecord] = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    text = str(exc).strip().splitlines()[0][:500] if str(exc).strip() else ""
                    records = [failed_record(c, type(exc).__name__, text, 0.0) for c in batch]
                durations = [r.duration_s for r in records if r.duration_s > 0]
                if durations:
                    latest = sum(durations) / len(durations)
                    mean_run_s = latest if mean_run_s is None else 0.7 * mean_run_s + 0.3 * latest
                yield from records

    def close(self) -> None:
        if self._owned:
            import ray

            ray.shutdown()
            self._owned = False
