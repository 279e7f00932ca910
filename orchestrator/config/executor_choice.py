"""Which executor a sweep runs on when its file does not name one: the default fits the work.

- ``executor.kind`` named (in the file, ``--executor``, or the Python API's ``executor=``):
  that kind (``explicit``).
- A cluster address (``executor.address``, ``--address``, or ``RAY_ADDRESS`` in the
  environment): Ray (``address``), which joins that cluster (``RAY_ADDRESS`` is joined by any
  Ray executor without an address of its own).
- An API-bound sweep (an ``async def`` runner, or ``executor.concurrency`` set): in-process
  (``api-bound default``), one event loop with threads for sync runners; starting Ray would
  cost seconds and a gigabyte for work that waits on the network. Unless the section sets an
  option only Ray honours (``num_cpus``, say): then Ray (``ray options``).
- Otherwise (a sync runner without ``concurrency``, CPU-bound work): Ray (``cpu default``),
  one run per CPU.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from counterfact.orchestrator.config.components import ExecutorConfig
from counterfact.orchestrator.engine.calling.arun import is_async_runner
from counterfact.orchestrator.engine.executors.registry import OPTIONS, unhonoured
from counterfact.orchestrator.engine.loading.loader import RunnerRef, resolve_runner
from counterfact.records.vocabulary import ExecutorChosen

_IN_PROCESS = "local"
_RAY = "ray"


@dataclass(frozen=True)
class ExecutorChoice:
    """The executor kind a sweep runs on, and why."""

    kind: str
    chosen: ExecutorChosen
    why: str = ""
    """A few words on a kind chosen by default (for the ``note:`` line)."""

    def note(self) -> str:
        """The choice in one line."""
        if self.chosen == "explicit":
            return f"executor: {self.kind} (named in the config)"
        return f"executor: {self.kind} ({self.chosen}: {self.why})"

    def notes(self) -> tuple[str, ...]:
        """The ``note:`` lines ``counterfact run`` and ``bisect`` print: the choice when the
        kind was chosen by default, none for a kind the user named (the Python API does not
        warn about it either: ``summary.json`` records it).
        """
        return () if self.chosen == "explicit" else (self.note(),)

    def record(self) -> dict[str, str]:
        """The ``executor`` record of ``summary.json``."""
        return {"kind": self.kind, "chosen": self.chosen}


RAY_ONLY_SET = ("max_in_flight", "infra_retries")
"""Options the in-process executor accepts but does nothing with: set, they mean Ray."""


def choose_executor(
    config: ExecutorConfig,
    runner: RunnerRef,
    environ: Mapping[str, str] | None = None,
) -> ExecutorChoice:
    """The executor ``config`` and ``runner`` call for (see the module docstring).

    Args:
        config: the validated ``executor:`` section.
        runner: the loaded runner (its ``async def``-ness decides an API-bound sweep).
        environ: the environment ``RAY_ADDRESS`` is read from (default ``os.environ``).
    """
    env = os.environ if environ is None else environ
    if "kind" in config.model_fields_set:
        return ExecutorChoice(config.kind, "explicit")
    if config.address is not None:
        return ExecutorChoice(_RAY, "address", f"executor.address {config.address}")
    joined = env.get("RAY_ADDRESS", "").strip()
    if joined:  # the Ray executor joins it (ray_exec), never a local instance beside it
        return ExecutorChoice(_RAY, "address", f"RAY_ADDRESS={joined} is set: joining that cluster")
    if config.concurrency is not None:
        why = f"executor.concurrency {config.concurrency}"
    elif is_async_runner(resolve_runner(runner)):
        why = "an async def runner"
    else:
        why = "a sync runner without executor.concurrency; set it for API calls"
        return ExecutorChoice(_RAY, "cpu default", why)
    section = {name: getattr(config, name) for name in OPTIONS if name in config.model_fields_set}
    section.pop("join_timeout_s", None)  # it bounds joining a cluster: no reason to start Ray
    ray_only = unhonoured(_IN_PROCESS, section) + [k for k in RAY_ONLY_SET if k in section]
    if ray_only:
        keys = ", ".join(f"executor.{k}" for k in ray_only)
        return ExecutorChoice(_RAY, "ray options", f"{why}, but {keys} applies to ray only")
    return ExecutorChoice(_IN_PROCESS, "api-bound default", f"{why}; in-process, no Ray started")
