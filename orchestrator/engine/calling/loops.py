"""The process's event loop for ``async def`` runners called from threads (the in-process
executor, ``validate --smoke``, a lost run rerun alone on Ray): one loop on a daemon thread, for
the life of the process.

One loop, not one per sweep or per call: runners cache clients (``AsyncOpenAI``, an
``httpx.AsyncClient``) that are bound to the loop they were made on, so a second loop in the
same process — the next ``compare_arms`` in a notebook, the next smoke run — would find them
"attached to a different loop" or "closed".

The one exception: a loop a runner blocked (``time.sleep`` or a busy loop inside ``async def``)
cannot turn, so no timeout on it can fire. The loop beats every :data:`BEAT_S`; whoever waits
on it can see how long it has not turned (:meth:`LoopThread.blocked_for`), and give it up
(:meth:`LoopThread.abandon`): the next :func:`process_loop` is a fresh one.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import threading
import time
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

from counterfact.orchestrator.engine.calling.loopguard import guard_loop, serve_forever

T = TypeVar("T")

_LOCK = threading.Lock()

BEAT_S = 0.1
"""How often a loop thread notes that its loop turned."""


class LoopAbandoned(SystemExit):
    """Raised asynchronously in the thread of an abandoned loop, so that a runner spinning in
    Python code there stops burning a CPU (a ``SystemExit``: the loop thread ends quietly).
    """


def _quiet_when_abandoned(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """An abandoned loop's runs are given up on purpose (each is recorded as failed): asyncio's
    "Task was destroyed but it is pending!" when one is collected, and "Task exception was never
    retrieved" for the run :class:`LoopAbandoned` stopped, are not news. Anything else goes to
    the default handler.
    """
    message = str(context.get("message", ""))
    if message.startswith("Task was destroyed but it is pending"):
        return
    if isinstance(context.get("exception"), LoopAbandoned):
        return
    loop.default_exception_handler(context)


class LoopThread:
    """An asyncio event loop running on a daemon thread, fed from other threads."""

    def __init__(self, name: str = "counterfact-loop") -> None:
        self.loop = asyncio.new_event_loop()
        guard_loop(self.loop)  # a runner's stop() or interrupt must not end it
        self._closing = threading.Event()
        self.abandoned = False
        """True once :meth:`abandon` gave the loop up."""
        self._turned = time.monotonic()
        self._thread = threading.Thread(
            target=serve_forever, args=(self.loop, self._closing.is_set), name=name, daemon=True
        )
        self.loop.call_soon_threadsafe(self._beat)
        self._thread.start()

    @property
    def thread(self) -> threading.Thread:
        """The thread the loop runs on."""
        return self._thread

    def _beat(self) -> None:
        self._turned = time.monotonic()
        self.loop.call_later(BEAT_S, self._beat)

    @property
    def alive(self) -> bool:
        """True while the loop's thread runs and is not given up (a forked child inherits no
        threads).
        """
        return not self.abandoned and self._thread.is_alive() and not self.loop.is_closed()

    def blocked_for(self) -> float:
        """Seconds since the loop last turned (under :data:`BEAT_S` while it turns freely)."""
        return time.monotonic() - self._turned

    def answers(self, within_s: float) -> bool:
        """True when the loop runs a callback sent now within ``within_s`` seconds: it only
        looked blocked (its thread was starved, e.g. of the GIL), it is not.
        """
        turned = threading.Event()
        try:
            self.loop.call_soon_threadsafe(turned.set)
        except RuntimeError:  # closed
            return False
        return turned.wait(within_s)

    def abandon(self) -> None:
        """Give the loop up without waiting for it: its runs are never waited for, it stops if it
        ever turns again, and a runner still spinning in Python code on its thread is stopped
        (:class:`LoopAbandoned`; one stuck in a C call such as ``time.sleep`` sleeps on, on a
        daemon thread that does not keep the process alive).
        """
        self.abandoned = True
        self.loop.set_exception_handler(_quiet_when_abandoned)
        self._closing.set()
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(self.loop.stop)
        ident = self._thread.ident
        if ident is not None and self._thread.is_alive():
            ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(ident), ctypes.py_object(LoopAbandoned)
            )

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
    """This process's loop thread, started on first use (after a fork, or once the last one
    was abandoned, a new one).
    """
    with _LOCK:
        if not _PROCESS or not _PROCESS[0].alive:
            _PROCESS[:] = [LoopThread()]
        return _PROCESS[0]
