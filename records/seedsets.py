"""Seed sets in records: a plain list when short, a bitmap when long.

A verdict row once listed every seed, flipped seed and similarity: at 500,000 seeds per arm one
line of ``verdicts.jsonl`` was about 10 MB. Above :data:`SEED_LIST_MAX` seeds a record writes each
seed set as a bitmap over ``0..samples_declared-1`` instead — a packed bit string with little bit
order (bit ``s`` of the stream is seed ``s``), base64-encoded: at most ``samples/6`` characters,
so 500,000 seeds take about 83 kB per set.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence

SEED_LIST_MAX = 10_000
"""Seed sets longer than this many declared seeds are written as bitmaps."""


def pack(seeds: Sequence[int], size: int) -> str:
    """The bitmap of ``seeds`` over ``0..size-1``, base64-encoded (standard library only: the
    same bytes as ``numpy.packbits(bits, bitorder="little")``).
    """
    raw = bytearray((size + 7) // 8)
    for seed in seeds:
        raw[seed >> 3] |= 1 << (seed & 7)
    return base64.b64encode(bytes(raw)).decode("ascii")


def unpack(encoded: str, size: int) -> list[int]:
    """The seeds a :func:`pack` bitmap holds, ascending."""
    raw = base64.b64decode(encoded)
    return [
        (i << 3) + bit
        for i, byte in enumerate(raw)
        if byte
        for bit in range(8)
        if byte >> bit & 1 and (i << 3) + bit < size
    ]
