"""Executors by name: ``local`` (in-process) and ``ray``."""

from __future__ import annotations

from counterfact.exceptions import ConfigError
from counterfact.orchestrator.config import ExecutorConfig
from counterfact.orchestrator.executors.base import Executor
from counterfact.orchestrator.executors.local import LocalExecutor
from counterfact.orchestrator.executors.ray_exec import RayExecutor

EXECUTORS: dict[str, type[Executor]] = {"local": LocalExecutor, "ray": RayExecutor}


def make_executor(config: ExecutorConfig) -> Executor:
    """Build the executor a config names.

    Raises:
        ConfigError: an unknown executor name; the message lists the known ones.
    """
    if config.kind == "ray":
        return RayExecutor(
            address=config.address,
            max_in_flight=config.max_in_flight,
            num_cpus=config.num_cpus,
        )
    if config.kind in EXECUTORS:
        return EXECUTORS[config.kind]()
    msg = f"unknown executor {config.kind!r}; known executors: {', '.join(sorted(EXECUTORS))}"
    raise ConfigError(msg, field="executor.kind")


__all__ = ["EXECUTORS", "Executor", "LocalExecutor", "RayExecutor", "make_executor"]
