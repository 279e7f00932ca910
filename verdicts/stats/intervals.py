"""Intervals of a binomial proportion: the flip rate's exact interval, and Wilson's.

Both are closed forms costing microseconds per row (``scipy.stats.binomtest(...).proportion_ci``
root-finds each exact bound, about two milliseconds: most of judging 10,000 scenarios).

- Clopper–Pearson: the bounds are quantiles of beta distributions (``low = B^-1(a/2; k,
  n - k + 1)``, ``high = B^-1(1 - a/2; k + 1, n - k)``, 0 and 1 at the edges), the values
  ``binomtest(k, n).proportion_ci(method="exact")`` finds by root-finding (to its ``brentq``
  tolerance, 2e-12). Clopper, C. J. &
  Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case of the
  binomial. Biometrika 26(4): 404-413.
- Wilson (no continuity correction), in the form of scipy's ``proportion_ci(method="wilson")``:
  Newcombe, R. G. (1998). Two-sided confidence intervals for the single proportion: comparison
  of seven methods. Statistics in Medicine 17(8): 857-872.
"""

from __future__ import annotations

import math
from functools import lru_cache

from scipy.special import betaincinv, ndtri

from counterfact.records.parts import Interval

FlipRateInterval = Interval
"""Two-sided interval for the flip probability (the record's one :class:`Interval`)."""


def flip_rate_interval(flips: int, scored: int, level: float = 0.95) -> Interval | None:
    """Clopper–Pearson exact interval of ``flips`` out of ``scored`` runs (None when it is 0)."""
    if scored <= 0:
        return None
    alpha = (1 - level) / 2
    low = 0.0 if flips == 0 else float(betaincinv(flips, scored - flips + 1, alpha))
    high = 1.0 if flips == scored else float(betaincinv(flips + 1, scored - flips, 1 - alpha))
    return Interval(low=low, high=high, level=level, method="clopper-pearson")


@lru_cache(maxsize=16)
def _z(level: float) -> float:
    return float(ndtri(0.5 + 0.5 * level))


def wilson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Two-sided Wilson score bounds of ``k`` successes in ``n >= 1`` trials (0 and 1 at the
    edges), computed as scipy's ``proportion_ci(method="wilson")`` does.
    """
    z = _z(level)
    p = k / n
    denom = 2 * (n + z**2)
    center = (2 * n * p + z**2) / denom
    delta = z / denom * math.sqrt(4 * n * p * (1 - p) + z**2)
    low = 0.0 if k == 0 else center - delta
    high = 1.0 if k == n else center + delta
    return low, high
