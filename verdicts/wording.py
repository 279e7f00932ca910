"""Wording shared by claims: long seed lists are summarised (records keep every seed)."""

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
