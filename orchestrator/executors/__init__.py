"""Executors by name: ``local`` (in-process) and ``ray``."""

from __future__ import annotations

from collections.abc import Callable

from counterfact.exceptions import ConfigError
from counterfact.orchestrator.config import ExecutorConfig
from counterfact.orchestrator.executors.base import Executor
from counterfact.orchestrator.executors.local import LocalExecutor
from counterfact.orchestrator.executors.ray_exec import RayExecutor
from counterfact.orchestrator.worker import RetryPolicy


def make_executor(config: ExecutorConfig) -> Executor:
    """Build the executor a config names.

    Raises:
        ConfigError: an unknown executor name; the message lists the known ones.
    """
    policy = RetryPolicy(retries=config.retries, retry_on=frozenset(config.retry_on))
    factories: dict[str, Callable[[], Executor]] = {
        "ray": lambda: RayExecutor(
            address=config.address,
            max_in_flight=config.max_in_flight,
            num_cpus=config.num_cpus,
            policy=policy,
            timeout_s=None if config.timeout_s is None else float(config.timeout_s),
            infra_retries=config.infra_retries,
        ),
        "local": lambda: LocalExecutor(policy=policy),
    }
    factory = factories.get(config.kind)
    if factory is None:
        known = ", ".join(sorted(factories))
        msg = f"unknown executor {config.kind!r}; known executors: {known}"
        raise ConfigError(msg, field="executor.kind")
    return factory()


__all__ = ["Executor", "LocalExecutor", "RayExecutor", "make_executor"]
