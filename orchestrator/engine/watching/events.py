"""Where the library's events go: through the standard ``logging`` module unless the host (or
the CLI) configured structlog.

Unconfigured, structlog prints every event to stdout, which would mix a line per run into a host
program's own output. So until someone calls ``structlog.configure`` (the CLI does), events go to
the stdlib logger ``counterfact``, which has only a ``NullHandler``: silent, until the host
configures ``logging`` — as httpx and Ray's libraries behave.
"""

from __future__ import annotations

import functools
import logging
import sys
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias, cast

if TYPE_CHECKING:
    import structlog

    Logger: TypeAlias = structlog.stdlib.BoundLogger
    """What :func:`get_logger` returns: a structlog bound logger (when the host configured
    structlog, its own wrapper class, which takes the same calls)."""
else:
    Logger = Any  # structlog is imported only when a logger is made (the CLI's start)

LOGGER_NAME = "counterfact"
logging.getLogger(LOGGER_NAME).addHandler(logging.NullHandler())

_SETUP: list[Callable[[], None]] = []
"""The host's logging set-up still to run before the first event (:func:`set_up_before_events`)."""


def set_up_before_events(setup: Callable[[], None] | None) -> None:
    """Run ``setup`` (which configures structlog) just before the first logger is made, not now;
    None forgets a set-up not yet run. The CLI's: a command that fails on bad input before any
    event never imports structlog (and rich), so it answers at once.
    """
    _SETUP[:] = [] if setup is None else [setup]


@functools.cache
def _stdlib_processors() -> list[structlog.typing.Processor]:
    """Events reach ``logging`` as one line ``event='run.failed' arm='alt' seed=2 ...``."""
    import structlog

    return [
        structlog.stdlib.filter_by_level,  # a disabled level costs nothing further
        structlog.contextvars.merge_contextvars,
        structlog.processors.KeyValueRenderer(key_order=["event"], sort_keys=True),
    ]


def get_logger(**context: object) -> Logger:
    """A structlog logger bound to ``context``, routed as the module docstring says."""
    import structlog  # here: importing this module costs nothing (the CLI's start)

    if _SETUP:
        _SETUP.pop()()
    if structlog.is_configured():
        return cast("Logger", structlog.get_logger(LOGGER_NAME).bind(**context))
    std = logging.getLogger(LOGGER_NAME)
    logger = structlog.wrap_logger(
        std, processors=_stdlib_processors(), wrapper_class=structlog.stdlib.BoundLogger
    )
    return cast("Logger", logger.bind(**context))


def _ours(module: str) -> bool:
    return module == "counterfact" or module.startswith("counterfact.")


def warn_caller(message: str, category: type[Warning]) -> None:
    """``warnings.warn`` attributed to the first frame outside counterfact: the user's call."""
    level, frame = 2, sys._getframe(1)
    while frame is not None and _ours(str(frame.f_globals.get("__name__", ""))):
        level, frame = level + 1, frame.f_back  # type: ignore[assignment]
    warnings.warn(message, category, stacklevel=level)
