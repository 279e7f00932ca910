"""Exact confidence interval of a probe's flip rate."""

from __future__ import annotations

from scipy.stats import binomtest

from counterfact.records.verdicts import Interval

FlipRateInterval = Interval
"""Two-sided interval for the flip probability (the record's one :class:`Interval`)."""


def flip_rate_interval(flips: int, samples: int, level: float = 0.95) -> Interval | None:
    """Clopper–Pearson exact interval via ``scipy.stats.binomtest(...).proportion_ci``.

    Clopper, C. J. & Pearson, E. S. (1934), Biometrika 26(4): 404-413. None when ``samples`` is 0.
    """
    if samples <= 0:
        return None
    ci = binomtest(flips, samples).proportion_ci(confidence_level=level, method="exact")
    return Interval(low=float(ci.low), high=float(ci.high), level=level, method="clopper-pearson")
