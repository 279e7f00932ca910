"""What both executors share when runs overlap (``executor.concurrency``): the settings and the
choice of path.
"""

from __future__ import annotations

from dataclasses import dataclass

from counterfact.defaults import CONCURRENCY_ASYNC
from counterfact.orchestrator.engine.calling.arun import is_async_runner
from counterfact.orchestrator.engine.loading.loader import RunnerRef, resolve_runner


@dataclass(frozen=True)
class PoolSettings:
    """How many runs overlap and how fast requests may start (``executor:`` keys)."""

    concurrency: int | None = None
    """Runs in flight at once across the sweep; None: one per CPU, or
    :data:`~counterfact.defaults.CONCURRENCY_ASYNC` for an ``async def`` runner."""
    per_minute: float | None = None
    """``rate_limit.requests_per_minute``: requests the whole sweep may start per minute."""

    def overlapping(self, runner: RunnerRef, workers: int) -> int | None:
        """Runs in flight on the overlapping path, or None: keep one run per worker (a sync
        runner with neither ``concurrency`` nor ``rate_limit`` set). ``workers``: one run per
        worker, for a sync runner that only sets ``rate_limit``.
        """
        if self.concurrency is not None:
            return self.concurrency
        if is_async_runner(resolve_runner(runner)):
            return CONCURRENCY_ASYNC
        return workers if self.per_minute is not None else None
