"""Runners for the benchmarks, loaded by file path on Ray workers."""

from __future__ import annotations

import time

from counterfact import RunContext


def sleep_20ms(ctx: RunContext) -> str:
    time.sleep(0.02)
    return "done"


def instant(ctx: RunContext) -> str:
    return "done"
