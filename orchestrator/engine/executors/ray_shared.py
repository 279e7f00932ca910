"""Many executor runs at once on one Ray cluster's worker actors, under one throttle actor.

``counterfact blame DIR --executor ray`` runs one culprit search per call, many at once, each
with an executor of its own (its own run directory, its own resume). Each search starting its
own worker actors and throttle would multiply the processes by the calls in flight and split the
API's limit into as many limits that do not hear of each other's refusals. A :class:`PoolHub`
instead starts or joins Ray once, and holds one
:class:`~counterfact.orchestrator.engine.executors.ray_pool.ActorPool` per runner (``blame``'s
calls share one): the worker actors and the single
:class:`~counterfact.orchestrator.engine.executors.ray_pool.ThrottleHost` that every call's runs,
on every node, report to — the rate controller of a sweep on Ray, shared by the calls.

Each call's :class:`SharedRayExecutor` drives its own runs on those actors under a channel of its
own (``PoolWorker.take``/``collect``): it hands over and collects its runs only, and a stop
cancels its runs only. Closing it leaves the actors to the hub; :meth:`PoolHub.close` ends them
(and the Ray instance, when the hub started it).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

from counterfact.exceptions import ExecutorError
from counterfact.orchestrator.engine.executors.base import SharedSlots
from counterfact.orchestrator.engine.executors.options import ExecutorOptions
from counterfact.orchestrator.engine.executors.ray_exec import RayExecutor
from counterfact.orchestrator.engine.executors.ray_pool import ActorPool
from counterfact.orchestrator.engine.loading.loader import RunnerRef
from counterfact.orchestrator.engine.pacing.throttle import ThrottleNow


class PoolHub:
    """Ray, worker actors and one throttle actor, shared by every executor it hands out.

    Args:
        options: the ``executor:`` section (address, retries, rate limit ...).
        ceiling: the shared limit's ceiling: runs in flight across every executor at once.
    """

    def __init__(self, options: ExecutorOptions, ceiling: int) -> None:
        self.options = options
        self.ceiling = max(1, ceiling)
        self.host = RayExecutor(options)
        """Starts or joins Ray (and shuts down the instance it started)."""
        self._pools: list[tuple[RunnerRef, ActorPool]] = []
        self._lock = threading.Lock()
        self.judge_share = False
        """Whether the actors keep a part of the limit for the calls' judges (one part for all
        of them: they share the driver's loop and its slots)."""

    def start(self) -> None:
        """Start or join Ray (from the main thread: Ray's signal handlers are put back)."""
        self.host.start()

    def executor(self) -> SharedRayExecutor:
        """An executor for one search, on this hub's actors under a channel of its own."""
        return SharedRayExecutor(self)

    def pool_for(self, ray: Any, runner: RunnerRef, workers: int) -> ActorPool:
        """The worker actors for ``runner`` (started by the first executor that needs them)."""
        with self._lock:
            for known, pool in self._pools:
                if known == runner:
                    return pool
            pool = ActorPool(
                ray,
                ray.put(runner),
                self.options.policy,
                concurrency=self.ceiling,
                per_minute=self.options.pool.per_minute,
                workers=workers,
                timeout_s=self.options.timeout_s,
                judge=self.judge_share,
            )
            self._pools.append((runner, pool))
            return pool

    def pools(self) -> list[ActorPool]:
        """The actor pools started so far."""
        with self._lock:
            return [pool for _, pool in self._pools]

    def close(self) -> None:
        """End the actors, then the Ray instance when the hub started it."""
        with self._lock:
            pools, self._pools = self._pools, []
        for _, pool in pools:
            pool.close()
        self.host.close()


class SharedRayExecutor(RayExecutor):
    """A Ray executor whose overlapping runs go to a :class:`PoolHub`'s actors."""

    def __init__(self, hub: PoolHub) -> None:
        super().__init__(hub.options)
        self.hub = hub
        self.channel = uuid.uuid4().hex
        self._pool: ActorPool | None = None

    def _ray(self) -> Any:
        """The hub's Ray, never started or joined here: once the hub closed it (Ctrl-C ends the
        command while calls are in flight), a call still running must stop, not start or join
        Ray again from its thread (that raced the process's exit: the command ended with exit 1
        and without its resume line).

        Raises:
            ExecutorError: Ray is not running (the command is stopping).
        """
        import ray

        if not ray.is_initialized():
            msg = "Ray was shut down (the command is stopping); this call's finished runs are kept"
            raise ExecutorError(msg)
        return ray

    def _pool_for(self, ray: Any, runner: RunnerRef, concurrency: int, workers: int) -> ActorPool:
        """The hub's actors for ``runner`` (``concurrency`` is the hub's ceiling, shared)."""
        self._pool = self.hub.pool_for(ray, runner, workers)
        return self._pool

    def slots_for_judge(self) -> Callable[[], SharedSlots | None]:
        """The judges' one part of the shared limit (reserved on the hub, before its actors)."""
        self.hub.judge_share = True
        return self.shared_slots

    def shared_slots(self) -> SharedSlots | None:
        """The judges' slots on the shared throttle actor (None before this call's runs)."""
        return None if self._pool is None else self._pool.judge_slots()

    def throttle_summary(self) -> dict[str, object] | None:
        """How the shared limit moved, so far (every search's runs moved it)."""
        return None if self._pool is None else self._pool.summary()

    def throttle_now(self) -> ThrottleNow | None:
        """The shared limit as last read."""
        return None if self._pool is None else self._pool.now()

    def close(self) -> None:
        """Nothing of its own to end: the actors and Ray are the hub's."""
