"""Ctrl-C, SIGTERM or SIGHUP during a sweep: the first stops scheduling (runs in flight finish,
or are cancelled when they overlap: a resume runs them); the second interrupts at once. SIGTERM
is what ``kill``, ``ray job stop``, a batch scheduler's pre-emption and a CI timeout send; SIGHUP
what a closed terminal or SSH session sends.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING

from counterfact.exceptions import Terminated
from counterfact.orchestrator.engine.calling.aborting import abort_now, activate, deactivate, reset
from counterfact.orchestrator.engine.watching.events import get_logger

if TYPE_CHECKING:  # the CLI installs the SIGTERM handler before any executor is loaded
    from counterfact.orchestrator.engine.executors.base import Executor

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals that stop a sweep gracefully; the exit code is then 128 + the signal's number."""


@contextmanager
def graceful_stop(executor: Executor) -> Iterator[None]:
    """While active, SIGINT, SIGTERM and SIGHUP ask ``executor`` to stop instead of ending the
    process.

    Only installed on the main thread (signal handlers can be set nowhere else); elsewhere this
    does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    log = get_logger()

    def handler(signum: int, frame: FrameType | None) -> None:
        if executor.stop_requested:
            abort_now()
            raise KeyboardInterrupt
        executor.request_stop(signum)
        log.warning(
            "sweep.stopping",
            note=(
                "no new runs; runs in flight finish (overlapping runs are cancelled: a resume "
                "runs them). Ctrl-C again to abort now."
            ),
        )

    reset()
    # a signal the parent chose to ignore stays ignored: 'nohup counterfact run' keeps running
    # after the terminal closes
    taken = tuple(sig for sig in STOP_SIGNALS if signal.getsignal(sig) is not signal.SIG_IGN)
    previous = {sig: signal.signal(sig, handler) for sig in taken}
    activate(taken, handler)
    try:
        yield
    finally:
        deactivate()
        for sig, old in previous.items():
            signal.signal(sig, old)


def terminate_as_interrupt() -> None:
    """From now on SIGTERM and SIGHUP raise :class:`~counterfact.exceptions.Terminated` in the
    main thread instead of ending the process without a word; :func:`graceful_stop` takes them
    over while runs execute and gives them back after. A signal the parent ignores (``nohup``)
    stays ignored. Called once by the CLI; a no-op off the main thread.
    """
    if threading.current_thread() is not threading.main_thread():
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        raise Terminated(signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, handler)
