"""The graceful stop's shared state, importable from anywhere in the engine without cycles.

- whether a ``KeyboardInterrupt`` is the user's: set by the graceful-stop handler just before it
  raises one (the second Ctrl-C or signal), so that an in-process run can tell a real abort from a
  runner that raised ``KeyboardInterrupt`` itself (which is that run's failure, not the sweep's);
- the active handler, so that starting Ray (whose ``ray.init`` installs a SIGTERM handler of its
  own that ends the process with a C++ stack dump and no summary) can put ours back.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType

Handler = Callable[[int, FrameType | None], None]

_ABORTING = threading.Event()
_ACTIVE: list[tuple[tuple[signal.Signals, ...], Handler]] = []


def activate(signals: tuple[signal.Signals, ...], handler: Handler) -> None:
    """Record the graceful-stop handler now installed for ``signals``."""
    _ACTIVE.append((signals, handler))


def deactivate() -> None:
    """The innermost graceful stop ended."""
    if _ACTIVE:
        _ACTIVE.pop()


def graceful_active() -> bool:
    """True while a graceful stop is installed (its handler tells the user's interrupt apart)."""
    return bool(_ACTIVE)


def reinstall() -> None:
    """Put the active graceful-stop handler back (after a library replaced it); main thread only."""
    if _ACTIVE and threading.current_thread() is threading.main_thread():
        signals, handler = _ACTIVE[-1]
        for sig in signals:
            signal.signal(sig, handler)


def abort_now() -> None:
    """Mark the interrupt about to be raised as the user's."""
    _ABORTING.set()


def aborting() -> bool:
    """True once the user asked to abort at once."""
    return _ABORTING.is_set()


def reset() -> None:
    """Forget an earlier abort (a new sweep in the same process)."""
    _ABORTING.clear()
