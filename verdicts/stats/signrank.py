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
``1/16 = 0.0625``). With ties or zeros and at most 13 pairs, scipy's default switches to a
permutation test costing seconds per call; :func:`signrank` never calls it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import rankdata

from counterfact.records.vocabulary import Alternative
from counterfact.verdicts.stats.tails import directed_p

EXACT_MAX = 400
"""Nonzero differences up to which the exact distribution is counted (O(n^3) integer work: about
a hundredth of a second at 400); beyond it the normal approximation is accurate."""


@dataclass(frozen=True)
class SignRank:
    """The signed-rank statistic of some differences and its exact p-value."""

    r_plus: float
    """Sum of the mid-ranks of the positive differences (zeros dropped)."""
    r_minus: float
    """Sum of the mid-ranks of the negative differences."""
    p_value: float
    """The exact sign-flip p in the direction asked."""

    def statistic(self, alternative: Alternative) -> float:
        """The statistic ``scipy.stats.wilcoxon`` reports: ``T+``, or ``min(T+, T-)`` two-sided."""
        return min(self.r_plus, self.r_minus) if alternative == "two-sided" else self.r_plus


def _counts(doubled: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Number of sign patterns giving each doubled ``T+`` (index = 2 T+); each rank only
    touches the sums reachable so far.
    """
    total = int(doubled.sum())
    ways = np.zeros(total + 1, dtype=np.float64)
    ways[0] = 1.0
    reach = 0
    for r in doubled:
        ways[r : r + reach + 1] += ways[: reach + 1].copy()
        reach += int(r)
    return ways


def signrank_exact(diffs: np.ndarray[Any, Any], alternative: Alternative) -> float | None:
    """The exact p that the differences lean positive (``greater``), negative (``less``) or
    either way (``two-sided``: twice the smaller tail, at most 1); None when there are more than
    :data:`EXACT_MAX` nonzero differences. 1.0 when every difference is zero.
    """
    found = signrank(diffs, alternative)
    return None if found is None else found.p_value


def signrank(diffs: np.ndarray[Any, Any], alternative: Alternative) -> SignRank | None:
    """The statistic and exact p (:func:`signrank_exact`) of ``diffs``; None when there are more
    than :data:`EXACT_MAX` nonzero differences.
    """
    nonzero = diffs[diffs != 0]
    n = len(nonzero)
    if n == 0:
        return SignRank(0.0, 0.0, 1.0)
    if n > EXACT_MAX:
        return None
    ranks = rankdata(np.abs(nonzero))
    positive = nonzero > 0
    r_plus, r_minus = float(ranks[positive].sum()), float(ranks[~positive].sum())
    doubled = np.rint(2 * ranks).astype(np.int64)
    t = int(doubled[positive].sum())
    ways = _counts(doubled)
    total = ways.sum()
    upper = float(ways[t:].sum() / total)  # P(T+ >= t)
    lower = float(ways[: t + 1].sum() / total)  # P(T+ <= t)
    p = directed_p(upper, lower, alternative)
    return SignRank(r_plus, r_minus, p)
