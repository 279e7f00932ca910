"""Exact confidence interval of a probe's flip rate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from scipy.stats import binomtest


@dataclass(frozen=True)
class FlipRateInterval:
    """Two-sided interval for the flip probability, from ``flips`` of ``samples``."""

    low: float
    high: float
    level: float
    method: Literal["clopper-pearson"] = "clopper-pearson"


def flip_rate_interval(flips: int, samples: int, level: float = 0.95) -> FlipRateInterval | None:
    """Clopper–Pearson exact interval via ``scipy.stats.binomtest(...).proportion_ci``.

    Clopper, C. J. & Pearson, E. S. (1934), Biometrika 26(4): 404-413. None when ``samples`` is 0.
    """
    if samples <= 0:
        return None
    ci = binomtest(flips, samples).proportion_ci(confidence_level=level, method="exact")
    return FlipRateInterval(low=float(ci.low), high=float(ci.high), level=level)
