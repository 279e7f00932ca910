"""Seed sets in records: a plain list when short, a bitmap when long.

A verdict row once listed every seed, flipped seed and similarity: at 500,000 seeds per arm one
line of ``verdicts.jsonl`` was about 10 MB. Above :data:`SEED_LIST_MAX` seeds a record writes each
seed set as a bitmap over ``0..samples_declared-1`` instead — ``numpy.packbits`` with little bit
order (bit ``s`` of the stream is seed ``s``), base64-encoded: at most ``samples/6`` characters,
so 500,000 seeds take about 83 kB per set.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence

import numpy as np

SEED_LIST_MAX = 10_000
"""Seed sets longer than this many declared seeds are written as bitmaps."""


def pack(seeds: Sequence[int], size: int) -> str:
    """The bitmap of ``seeds`` over ``0..size-1``, base64-encoded."""
    bits = np.zeros(size, dtype=bool)
    bits[np.asarray(seeds, dtype=np.int64)] = True
    return base64.b64encode(np.packbits(bits, bitorder="little").tobytes()).decode("ascii")


def unpack(encoded: str, size: int) -> list[int]:
    """The seeds a :func:`pack` bitmap holds, ascending."""
    raw = np.frombuffer(base64.b64decode(encoded), dtype=np.uint8)
    bits = np.unpackbits(raw, count=size, bitorder="little").astype(bool)
    return [int(s) for s in np.flatnonzero(bits)]
