"""Futility with a declared minimal effect (rule 19, ``sequential.min_effect``): an always-valid
test that the arm's effect is *smaller* than the least one worth finding.

Per scored seed pair the paired difference is ``D = arm flipped - baseline flipped`` in
{-1, 0, 1}; its mean is the flip-rate difference (the effect). For ``greater`` the null to
reject is ``E[D] >= d``. For a fixed bet ``lam`` in ``[0, 1/(1 - d))`` the wealth

    K = prod_i (1 - lam * (D_i - d))

stays nonnegative (``D <= 1``) and is a supermartingale under that null (each factor has mean
``1 - lam * (E[D] - d) <= 1``). A uniform mixture over a grid of bets is again a nonnegative
supermartingale starting at 1, so by Ville's inequality it reaches ``1/alpha`` with probability at
most ``alpha`` whenever the effect is at least ``d``, however often it is looked at: stopping as
futile at that point wrongly abandons a real effect of size ``d`` at most ``alpha`` of the time.
With fixed bets the wealth depends on the counts only (``n10`` factors ``1 - lam (1 - d)``,
``n01`` factors ``1 + lam (1 + d)``, ``n00 + n11`` factors ``1 + lam d``), so seed order does not
matter and a resumed sweep replays it. ``less`` mirrors ``D``; ``two-sided`` must rule out both
``E[D] >= d`` and ``E[D] <= -d`` and takes the smaller of the two e-values (an
intersection-union test: each at ``alpha`` gives ``alpha``). This is the betting construction of
Waudby-Smith and Ramdas (2024), Estimating means of bounded random variables by betting, JRSS-B
86(1), with a fixed grid of bets in place of a predictable one.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.special import logsumexp

from counterfact.defaults import ALTERNATIVE
from counterfact.records.vocabulary import Alternative

GRID = 24
"""Bets in the mixture; each costs ``log(GRID)`` of evidence, so a few dozen is plenty."""


def _bets(d: float) -> np.ndarray:
    """Bets up to 95% of the largest that keeps every factor positive (``1/(1 - d)``)."""
    top = 0.95 / (1 - d) if d < 0.95 else 19.0
    return np.linspace(top / GRID, top, GRID)


def _log_one_side(against: int, towards: int, concordant: int, d: float) -> float:
    """``log`` of the mixture wealth against ``E[D] >= d``, ``towards`` pairs with ``D = 1``."""
    lam = _bets(d)
    logs = (
        towards * np.log1p(-lam * (1 - d))
        + against * np.log1p(lam * (1 + d))
        + concordant * np.log1p(lam * d)
    )
    return float(logsumexp(logs)) - math.log(len(lam))


@lru_cache(maxsize=1 << 16)
def log_futility_e(
    n10: int, n01: int, concordant: int, d: float, alternative: Alternative = ALTERNATIVE
) -> float:
    """The log e-value against "the effect is at least ``d``" in the alternative's direction
    (memoized: a pure function of its arguments).

    Args:
        n10: pairs where the arm flipped and the baseline held (``D = 1``).
        n01: pairs where the baseline flipped and the arm held (``D = -1``).
        concordant: pairs where both flipped or both held (``D = 0``).
        d: the minimal effect, 0 < d <= 1.
        alternative: ``greater`` rules out ``E[D] >= d``, ``less`` ``E[D] <= -d``,
            ``two-sided`` both.
    """
    if not 0 < d <= 1:
        msg = f"the minimal effect must be in (0, 1], got {d!r}"
        raise ValueError(msg)
    concordant = max(concordant, 0)
    greater = _log_one_side(n01, n10, concordant, d)
    less = _log_one_side(n10, n01, concordant, d)
    if alternative == "greater":
        return greater
    if alternative == "less":
        return less
    return min(greater, less)
