"""Executors by name: ``local`` (in-process) and ``ray``. The config schema, the loader's notes,
the CLI's choices and :func:`make_executor` read the one table :data:`EXECUTORS`
(:mod:`.registry`), so adding an executor, or an option one of them honours, is one entry.

Ray is imported only when a Ray executor starts, never by importing this package.
"""

from __future__ import annotations

from counterfact.orchestrator.engine.executors.base import Executor
from counterfact.orchestrator.engine.executors.local import LocalExecutor
from counterfact.orchestrator.engine.executors.pooling import PoolSettings
from counterfact.orchestrator.engine.executors.registry import (
    EXECUTORS,
    OPTIONS,
    ExecutorKind,
    ExecutorOptions,
    make_executor,
    refusal,
    unhonoured,
)

__all__ = [
    "EXECUTORS",
    "OPTIONS",
    "Executor",
    "ExecutorKind",
    "ExecutorOptions",
    "LocalExecutor",
    "PoolSettings",
    "make_executor",
    "refusal",
    "unhonoured",
]
