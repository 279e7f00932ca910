"""The garbage collector while a sweep is judged.

Judging an eval set builds hundreds of thousands of small objects (rows, doubts, records) on top
of a heap that already holds every run's tally. With CPython's default thresholds a young
collection runs every 700 allocations and the older generations are traversed again and again:
measured at 10,000 questions x 4 arms x 5 seeds (``scripts/bench_judging.py``), 12.3 s of CPU
judging, 8.5 s with the heap frozen and the thresholds raised, and the same peak memory
(judging makes few reference cycles). The collector is restored on the way out.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

JUDGING_THRESHOLDS = (50_000, 20, 20)
"""Young-generation allocations between collections, then the older generations' multipliers."""


@contextmanager
def judging_heap() -> Iterator[None]:
    """Freeze what the heap holds now (collections skip it) and collect less often; restore.

    A program that froze its own heap (``compare_arms`` called from it) keeps its freeze: the
    heap is frozen and unfrozen here only when nothing was frozen before.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # the collector is the process's: threads (blame's calls) leave it as it is
        return
    before = gc.get_threshold()
    ours = gc.get_freeze_count() == 0
    if ours:
        gc.freeze()
    gc.set_threshold(*JUDGING_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        if ours:
            gc.unfreeze()
