"""Logging setup, called by the CLI only: pretty on a terminal, JSON lines otherwise."""

from __future__ import annotations

import logging
import sys

import structlog


def configure_logging(*, verbose: bool = False, json_logs: bool | None = None) -> None:
    """Send structlog events to stderr; ``json_logs`` None means JSON unless stderr is a TTY."""
    as_json = not sys.stderr.isatty() if json_logs is None else json_logs
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if as_json else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.DEBUG if verbose else logging.INFO
        ),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
