"""The paired similarity test's exact p-value: the sign-flip permutation distribution of the
Wilcoxon signed-rank statistic, with ties and zeros.

Under the null (the arm and the baseline are exchangeable within each seed pair) each nonzero
difference is equally likely to be positive or negative, independently. Zero differences are
dropped and the rest ranked by absolute value with mid-ranks (scipy's default ``zero_method
'wilcox'``); the statistic ``T+`` is the sum of the ranks of the positive differences. Its null
distribution is the distribution of the sum of a uniformly random subset of the ranks, counted
exactly by a dynamic programme over the doubled (integer) ranks — all ``2^n`` sign patterns,
without listing them. scipy's ``wilcoxon`` uses a normal approximation once there are ties or
zeros; with few pairs that approximation can report a p below the smallest attainable one (four
nonzero differences, all one way, give the approximate p = 0.034; the exact smallest p is
``1/16 = 0.0625``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import rankdata

from counterfact.records.vocabulary import Alternative

EXACT_MAX = 400
"""Nonzero differences up to which the exact distribution is counted (O(n^3) integer work: about
a tenth of a second at 400); beyond it the normal approximation is accurate."""


def _counts(doubled: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Number of sign patterns giving each doubled ``T+`` (index = 2 T+)."""
    total = int(doubled.sum())
    ways = np.zeros(total + 1, dtype=np.float64)
    ways[0] = 1.0
    for r in doubled:
        shifted = np.zeros_like(ways)
        shifted[r:] = ways[: total + 1 - r]
        ways = ways + shifted
    return ways


def signrank_exact(diffs: np.ndarray[Any, Any], alternative: Alternative) -> float | None:
    """The exact p that the differences lean positive (``greater``), negative (``less``) or
    either way (``two-sided``: twice the smaller tail, at most 1); None when there are more than
    :data:`EXACT_MAX` nonzero differences. 1.0 when every difference is zero.
    """
    nonzero = diffs[diffs != 0]
    n = len(nonzero)
    if n == 0:
        return 1.0
    if n > EXACT_MAX:
        return None
    doubled = np.rint(2 * rankdata(np.abs(nonzero))).astype(np.int64)
    t = int(doubled[nonzero > 0].sum())
    ways = _counts(doubled)
    total = ways.sum()
    upper = float(ways[t:].sum() / total)  # P(T+ >= t)
    lower = float(ways[: t + 1].sum() / total)  # P(T+ <= t)
    if alternative == "greater":
        return upper
    if alternative == "less":
        return lower
    return min(1.0, 2 * min(upper, lower))
