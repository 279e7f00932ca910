"""The process's event loop for ``async def`` runners called from threads (the in-process
executor, ``validate --smoke``, a lost run rerun alone on Ray): one loop on a daemon thread, for
the life of the process.

One loop, not one per sweep or per call: runners cache clients (``AsyncOpenAI``, an
``httpx.AsyncClient``) that are bound to the loop they were made on, so a second loop in the
same process — the next ``compare_arms`` in a notebook, the next smoke run — would find them
"attached to a different loop" or "closed".
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

from counterfact.orchestrator.engine.loopguard import guard_loop, serve_forever

T = TypeVar("T")

_LOCK = threading.Lock()


class LoopThread:
    """An asyncio event loop running on a daemon thread, fed from other threads."""

    def __init__(self, name: str = "counterfact-loop") -> None:
        self.loop = asyncio.new_event_loop()
        guard_loop(self.loop)  # a runner's stop() or interrupt must not end it
        self._closing = threading.Event()
        self._thread = threading.Thread(
            target=serve_forever, args=(self.loop, self._closing.is_set), name=name, daemon=True
        )
        self._thread.start()

    @property
    def alive(self) -> bool:
        """True while the loop's thread runs (a forked child inherits no threads)."""
        return self._thread.is_alive() and not self.loop.is_closed()

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        """Schedule ``coro`` on the loop; its future can be cancelled from any thread."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop and wait for it (from any thread but the loop's own)."""
        return self.submit(coro).result()

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
        self._closing.set()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self.loop.close()


_PROCESS: list[LoopThread] = []


def process_loop() -> LoopThread:
    """This process's loop thread, started on first use (after a fork, a new one)."""
    with _LOCK:
        if not _PROCESS or not _PROCESS[0].alive:
            _PROCESS[:] = [LoopThread()]
        return _PROCESS[0]
