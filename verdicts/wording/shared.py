"""Wording shared by claims and command output: long seed lists are summarised (records keep
every seed); durations are given in the unit that reads best.
"""

from __future__ import annotations

from collections.abc import Sequence

SHOWN_SEEDS = 10
"""A claim lists at most this many seeds; the rest are counted."""


def seed_list(seeds: Sequence[int], shown: int = SHOWN_SEEDS) -> str:
    """``[0, 1, 2]`` for short lists; ``0, 1, …, 9, … and 4,990 more`` for long ones."""
    if len(seeds) <= shown:
        return str(list(seeds))
    head = ", ".join(str(s) for s in seeds[:shown])
    return f"{head}, … and {len(seeds) - shown:,} more"


def duration(seconds: float) -> str:
    """``42.0 s``, ``12.5 min`` or ``3.2 h``."""
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"
