"""What both executors share when runs overlap (``executor.concurrency``): the settings, the
choice of path, and an event loop on a thread for the driver's side.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, TypeVar

from counterfact.defaults import CONCURRENCY_ASYNC
from counterfact.orchestrator.engine.arun import is_async_runner
from counterfact.orchestrator.engine.loader import RunnerRef, resolve_runner

T = TypeVar("T")


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


class LoopThread:
    """An asyncio event loop running on a daemon thread, fed from other threads."""

    def __init__(self, name: str = "counterfact-loop") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        """Schedule ``coro`` on the loop; its future can be cancelled from any thread."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self) -> None:
        """Cancel what is left on the loop, stop it and wait for its thread."""

        async def _cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        if self.loop.is_closed():
            return
        # a run that ignores cancellation is left to the daemon thread
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(_cancel_all(), self.loop).result(timeout=5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self.loop.close()
