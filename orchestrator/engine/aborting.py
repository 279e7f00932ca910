"""Whether a ``KeyboardInterrupt`` is the user's: set by the graceful-stop handler just before it
raises one (the second Ctrl-C or signal), so that an in-process run can tell a real abort from a
runner that raised ``KeyboardInterrupt`` itself (which is that run's failure, not the sweep's).
"""

from __future__ import annotations

import threading

_ABORTING = threading.Event()


def abort_now() -> None:
    """Mark the interrupt about to be raised as the user's."""
    _ABORTING.set()


def aborting() -> bool:
    """True once the user asked to abort at once."""
    return _ABORTING.is_set()


def reset() -> None:
    """Forget an earlier abort (a new sweep in the same process)."""
    _ABORTING.clear()
