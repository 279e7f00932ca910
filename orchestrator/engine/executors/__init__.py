"""Executors by name: ``local`` (in-process) and ``ray``. The config schema, the CLI's choices and
:func:`make_executor` read the one table :data:`EXECUTORS`, so adding an executor is one entry.

Ray is imported only when a Ray executor starts, never by importing this package.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from counterfact.defaults import INFRA_RETRIES, MAX_IN_FLIGHT
from counterfact.exceptions import ConfigError
from counterfact.orchestrator.engine.executors.base import Executor
from counterfact.orchestrator.engine.executors.local import LocalExecutor
from counterfact.orchestrator.engine.executors.pooling import PoolSettings
from counterfact.orchestrator.engine.worker import RetryPolicy


@dataclass(frozen=True)
class ExecutorOptions:
    """What an executor may be built with (the ``executor:`` section, validated)."""

    policy: RetryPolicy = field(default_factory=RetryPolicy)
    address: str | None = None
    max_in_flight: int = MAX_IN_FLIGHT
    num_cpus: int | None = None
    timeout_s: float | None = None
    infra_retries: int = INFRA_RETRIES
    ship_dir: str | None = None
    """A file runner's folder: shipped to every node when joining a cluster."""
    pool: PoolSettings = field(default_factory=PoolSettings)
    """Overlapping runs: ``concurrency`` and ``rate_limit``."""


def _ray(options: ExecutorOptions) -> Executor:
    from counterfact.orchestrator.engine.executors.ray_exec import RayExecutor

    return RayExecutor(
        address=options.address,
        max_in_flight=options.max_in_flight,
        num_cpus=options.num_cpus,
        policy=options.policy,
        timeout_s=options.timeout_s,
        infra_retries=options.infra_retries,
        ship_dir=options.ship_dir,
        pool=options.pool,
    )


def _local(options: ExecutorOptions) -> Executor:
    return LocalExecutor(policy=options.policy, pool=options.pool, timeout_s=options.timeout_s)


EXECUTORS: Mapping[str, Callable[[ExecutorOptions], Executor]] = {"ray": _ray, "local": _local}
"""Executor kinds by name."""


def make_executor(kind: str, options: ExecutorOptions | None = None) -> Executor:
    """Build the executor named ``kind``.

    Raises:
        ConfigError: an unknown executor name; the message lists the known ones.
    """
    factory = EXECUTORS.get(kind)
    if factory is None:
        known = ", ".join(sorted(EXECUTORS))
        msg = f"unknown executor {kind!r}; known executors: {known}"
        raise ConfigError(msg, field="executor.kind")
    return factory(options or ExecutorOptions())


__all__ = [
    "EXECUTORS",
    "Executor",
    "ExecutorOptions",
    "LocalExecutor",
    "PoolSettings",
    "make_executor",
]
