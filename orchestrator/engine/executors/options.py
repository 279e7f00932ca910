"""What an executor may be built with: :class:`ExecutorOptions`, the ``executor:`` section
validated, which the registry builds each kind from and the Ray executor takes whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from counterfact.defaults import INFRA_RETRIES, JOIN_TIMEOUT_S, MAX_IN_FLIGHT

if TYPE_CHECKING:  # loaded when an executor is built: the config schema needs the options only
    from counterfact.orchestrator.engine.calling.worker import RetryPolicy
    from counterfact.orchestrator.engine.executors.pooling import PoolSettings


def _policy() -> RetryPolicy:
    from counterfact.orchestrator.engine.calling.worker import RetryPolicy

    return RetryPolicy()


def _pool() -> PoolSettings:
    from counterfact.orchestrator.engine.executors.pooling import PoolSettings

    return PoolSettings()


@dataclass(frozen=True)
class ExecutorOptions:
    """What an executor may be built with (the ``executor:`` section, validated)."""

    policy: RetryPolicy = field(default_factory=_policy)
    address: str | None = None
    max_in_flight: int = MAX_IN_FLIGHT
    num_cpus: int | None = None
    timeout_s: float | None = None
    infra_retries: int = INFRA_RETRIES
    join_timeout_s: float = JOIN_TIMEOUT_S
    ship_dir: str | None = None
    """A file runner's folder: shipped to every node when joining a cluster."""
    pool: PoolSettings = field(default_factory=_pool)
    """Overlapping runs: ``concurrency`` and ``rate_limit``."""
