"""Power of the unpaired test (``statistics.pairing: none``) for ``counterfact plan``.

The sweep's unpaired test is Fisher's exact test on the 2x2 table of the arm's and the baseline's
flips, ``n`` runs each (:func:`~counterfact.verdicts.stats.significance.fisher_one_sided`). Given
the total ``t`` of flips, the arm's count is hypergeometric, ``X ~ Hypergeom(2n, t, n)``, and the
test rejects at level ``a`` when ``X >= c_t``, the smallest count whose tail ``P(X >= c | t)`` is at
most ``a``. With equal runs per side that distribution is symmetric about ``t / 2``, so ``less``
rejects when ``X <= t - c_t`` and scipy's two-sided p (the tables no more likely than the one
seen) is twice the nearer tail: two-sided rejects when either tail is at most ``a / 2``.

The power sums the rejection region over the arm's and the baseline's independent binomial
counts, ``Binomial(n, p_arm)`` and ``Binomial(n, p_base)``:

    power = sum_{x, y} P(x) P(y) [x rejects given t = x + y]

exactly, over each count's range outside which its binomial tail is below ``TAIL``: the mass
left out is at most ``2 * TAIL`` per side, which the plan's method names.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import binom, hypergeom

from counterfact.records.vocabulary import Alternative
from counterfact.verdicts.planning.power import least_tail_count

TAIL = 1e-12
"""Binomial tail mass left out of the enumeration on each side of each count."""


def fisher_critical(t: np.ndarray[Any, Any], n: int, level: float) -> np.ndarray[Any, Any]:
    """Per flip total ``t``: the smallest arm count ``c`` with ``P(X >= c | t) <= level``, ``X ~
    Hypergeom(2n, t, n)`` (``min(t, n) + 1`` when no count reaches it).
    """
    return least_tail_count(hypergeom(2 * n, t, n), np.minimum(t, n), level)


def _counts(n: int, p: float) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The counts of ``Binomial(n, p)`` outside whose range each tail is below ``TAIL``."""
    low = int(binom.ppf(TAIL, n, p)) if p > 0 else 0
    high = int(binom.isf(TAIL, n, p)) + 1 if p < 1 else n
    xs = np.arange(max(low - 1, 0), min(high, n) + 1)
    return xs, binom.pmf(xs, n, p)


def unpaired_power(
    n: int, p_arm: float, p_base: float, level: float, alternative: Alternative
) -> float:
    """Exact power of Fisher's test at ``n`` runs per side (see the module docstring)."""
    if n <= 0:
        return 0.0
    xs, wx = _counts(n, p_arm)
    ys, wy = _counts(n, p_base)
    t = xs[:, None] + ys[None, :]
    x = np.broadcast_to(xs[:, None], t.shape)
    totals = np.arange(int(t.min()), int(t.max()) + 1)
    if alternative == "two-sided":
        c = fisher_critical(totals, n, level / 2)[t - totals[0]]
        hit = (x >= c) | (x <= t - c)
    elif alternative == "less":
        hit = x <= t - fisher_critical(totals, n, level)[t - totals[0]]
    else:
        hit = x >= fisher_critical(totals, n, level)[t - totals[0]]
    return float(min(1.0, np.sum(wx[:, None] * wy[None, :] * hit)))
