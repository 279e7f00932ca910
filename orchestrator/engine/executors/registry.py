"""The executor table: each kind's factory and the ``executor:`` options it honours.

One entry per kind. The config schema refuses an option the kind does not honour, the loader
drops them (with a note) when ``--executor`` switches kinds, and :func:`make_executor` builds
from the same entry, so "which keys apply where" is written once, here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from counterfact.exceptions import ConfigError
from counterfact.orchestrator.engine.executors.options import ExecutorOptions

if TYPE_CHECKING:  # the executors load when one is built: the config schema needs the table only
    from counterfact.orchestrator.engine.executors.base import Executor


OPTIONS = (
    "address",
    "max_in_flight",
    "retries",
    "retry_on",
    "timeout_s",
    "infra_retries",
    "num_cpus",
    "join_timeout_s",
    "concurrency",
    "rate_limit",
)
"""Every key of the ``executor:`` section besides ``kind``."""


@dataclass(frozen=True)
class ExecutorKind:
    """One executor kind: how to build it and which options it honours."""

    build: Callable[[ExecutorOptions], Executor]
    takes: frozenset[str]
    """Options this kind always honours."""
    takes_beside: Mapping[str, str] = field(default_factory=dict)
    """Options honoured only when another is set too (``{option: the other}``)."""

    def honours(self, option: str, section: Mapping[str, object]) -> bool:
        """True when ``option`` applies to this kind, given the section's other values."""
        if option in self.takes:
            return True
        other = self.takes_beside.get(option)
        return other is not None and section.get(other) is not None


def _ray(options: ExecutorOptions) -> Executor:
    from counterfact.orchestrator.engine.executors.ray_exec import RayExecutor

    return RayExecutor(options)


def _local(options: ExecutorOptions) -> Executor:
    from counterfact.orchestrator.engine.executors.local import LocalExecutor

    return LocalExecutor(policy=options.policy, pool=options.pool, timeout_s=options.timeout_s)


_LOCAL_TAKES = (
    "retries",
    "retry_on",
    "concurrency",
    "rate_limit",
    "max_in_flight",
    "infra_retries",
)
"""``max_in_flight`` and ``infra_retries`` are accepted in-process and have nothing to cap."""

EXECUTORS: Mapping[str, ExecutorKind] = {
    "ray": ExecutorKind(_ray, frozenset(OPTIONS)),
    "local": ExecutorKind(_local, frozenset(_LOCAL_TAKES), {"timeout_s": "concurrency"}),
}
"""Executor kinds by name."""

WHY: Mapping[str, str] = {
    "address": "'address' applies only to kind {takers}, not {kind!r}; remove it",
    "timeout_s": (
        "'timeout_s' needs kind {takers} or 'concurrency': a run called in order inside this "
        "process cannot be cancelled; use the ray executor, set concurrency (async runs are "
        "then cancelled on the event loop), or remove timeout_s"
    ),
    "num_cpus": (
        "'num_cpus' sizes the local Ray instance counterfact starts; it applies only to kind "
        "{takers} without 'address' (a cluster's size is its own); remove it"
    ),
}
"""Why an option is refused for a kind that does not honour it (``{kind}``, ``{takers}``)."""


def unhonoured(kind: str, section: Mapping[str, object]) -> list[str]:
    """The options set in ``section`` that ``kind`` does not honour, in table order."""
    entry = EXECUTORS[kind]
    return [k for k in OPTIONS if section.get(k) is not None and not entry.honours(k, section)]


def refusal(option: str, kind: str) -> str:
    """The message refusing ``option`` for ``kind``."""
    takers = " or ".join(repr(k) for k, e in EXECUTORS.items() if option in e.takes)
    template = WHY.get(option, "'{option}' applies only to kind {takers}, not {kind!r}; remove it")
    return template.format(option=option, kind=kind, takers=takers)


def make_executor(kind: str, options: ExecutorOptions | None = None) -> Executor:
    """Build the executor named ``kind``.

    Raises:
        ConfigError: an unknown executor name; the message lists the known ones.
    """
    entry = EXECUTORS.get(kind)
    if entry is None:
        known = ", ".join(sorted(EXECUTORS))
        msg = f"unknown executor {kind!r}; known executors: {known}"
        raise ConfigError(msg, field="executor.kind")
    return entry.build(options or ExecutorOptions())
