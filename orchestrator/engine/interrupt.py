"""Ctrl-C during a sweep: the first stops scheduling and lets runs in flight finish; the second
interrupts at once.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from counterfact.orchestrator.engine.events import get_logger
from counterfact.orchestrator.engine.executors import Executor


@contextmanager
def graceful_stop(executor: Executor) -> Iterator[None]:
    """While active, SIGINT asks ``executor`` to stop instead of raising KeyboardInterrupt.

    Only installed on the main thread (signal handlers can be set nowhere else); elsewhere this
    does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    log = get_logger()

    def handler(signum: int, frame: FrameType | None) -> None:
        if executor.stop_requested:
            raise KeyboardInterrupt
        executor.request_stop()
        log.warning(
            "sweep.stopping",
            note="no new runs; waiting briefly for runs in flight. Ctrl-C again to abort now.",
        )

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
