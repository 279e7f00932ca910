"""The rate a calibration or benchmark script reports: hits over trials with its Clopper-Pearson 95%
interval, shared by ``calibrate.py``, ``calibrate_more.py`` and ``bench_sequential.py``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from counterfact.verdicts.stats.intervals import flip_rate_interval

ALPHA = 0.05
"""The level every calibrated cell is run at."""


@dataclass(frozen=True)
class Rate:
    hits: int
    n: int

    def __str__(self) -> str:
        ci = flip_rate_interval(self.hits, self.n)
        assert ci is not None
        return f"{self.hits / self.n:.3f} [{ci.low:.3f}, {ci.high:.3f}]"

    @property
    def low(self) -> float:
        ci = flip_rate_interval(self.hits, self.n)
        assert ci is not None
        return ci.low

    @property
    def high(self) -> float:
        ci = flip_rate_interval(self.hits, self.n)
        assert ci is not None
        return ci.high


def rate(sweeps: int, event: Callable[[], bool]) -> Rate:
    return Rate(sum(event() for _ in range(sweeps)), sweeps)
