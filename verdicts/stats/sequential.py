"""Sequential sampling (rule 19): an always-valid test, looked at after every wave.


The unit is the discordant seed pair of an arm and its baseline (as in the fixed-sample test):
``n10`` pairs where the arm flipped and the baseline held, ``n01`` the reverse. Under the null
(the arm does not change how often the answer flips) a discordant pair goes either way with
probability 1/2, so ``n10`` among ``n10 + n01`` is Binomial(., 1/2).

Evidence is a beta-binomial mixture e-process: the likelihood ratio of ``p`` against 1/2,
averaged over a uniform prior on ``p`` over the alternative. For ``greater`` (the arm flips more)
the prior is on [1/2, 1]:

    E = 2 ** (n10 + n01 + 1) * integral_{1/2}^{1} p ** n10 * (1 - p) ** n01 dp
      = 2 ** (n10 + n01 + 1) * B(n10 + 1, n01 + 1) * I_{1/2}(n01 + 1, n10 + 1)

(``I`` the regularized incomplete beta function; a binomial tail in log space when it underflows).
``less`` (a fix) is the mirror, ``n10`` and ``n01`` exchanged. ``two-sided`` is the mean of the
two, which is the uniform prior on [0, 1]: ``E = 2 ** (n10 + n01) * B(n10 + 1, n01 + 1)``.
A mixture of likelihood ratios (and a mean of e-processes) is a nonnegative martingale with mean
1 under the null, so by Ville's inequality ``P(sup_n E_n >= 1/a) <= a``: the test keeps its error
rate however often it is looked at, and ``E`` at the stopping time is an e-value. Concordant
pairs leave ``E`` unchanged. Reference: Ramdas, Grünwald, Vovk and Shafer (2023), Game-theoretic
statistics and safe anytime-valid inference, Statistical Science 38(4); the mixture is Robbins'
(1970) method of mixtures.

With ``pairing: none`` (runs independent whatever the seed), pairs are formed by seed index: two
independent runs with the same flip rate make both discordant orders equally likely, so the same
e-process is valid; it is simply less powerful than a paired design.

Family control: ``p = min(1, 1/E)`` is a valid p-value (Markov), so the family's adjustment
(Holm, or BH on ``1/E`` which is the e-BH procedure of Wang and Ramdas (2022), valid under any
dependence) applies to it unchanged. An arm stops as ``significant`` once ``E`` reaches
:func:`~counterfact.verdicts.stats.settings.stop_threshold` — the point at which the adjustment
declares it significant whatever the other arms show — and as ``futile`` once no outcome of its
remaining seeds up to ``max_samples`` could lift ``E`` to ``1/alpha``, the least any adjustment
asks.

Futility with a declared minimal effect (``sequential.min_effect: d``): a second, always-valid
test of the null "the effect is at least ``d``" (see :mod:`counterfact.verdicts.stats.futility`);
the arm also stops as ``futile`` once it rejects that null at ``alpha``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np
from scipy.special import betainc, betaln, gammaln, logsumexp

from counterfact.defaults import ALTERNATIVE
from counterfact.records.vocabulary import Alternative, StoppedFor
from counterfact.verdicts.stats.futility import log_futility_e
from counterfact.verdicts.stats.settings import Waves

"""Why an arm stopped: its e-value reached the threshold; it could no longer reach it by
``max_samples``; it reached ``max_samples``; or it has no test (no reference to score against)."""

METHOD = "beta-binomial mixture e-process (one-sided, anytime-valid)"
METHODS: dict[str, str] = {
    "greater": METHOD,
    "less": METHOD,
    "two-sided": "beta-binomial mixture e-process (two-sided, anytime-valid)",
}


def _log_greater(n10: int, n01: int) -> float:
    """``log E`` for ``greater``.

    ``2 ** (n + 1) * I_{1/2}(n01 + 1, n10 + 1)`` is the binomial tail ``sum_{j > n01} C(n+1, j)``,
    summed in log space (``scipy.special.logsumexp``) so that it does not underflow when the
    baseline's discordant pairs number in the thousands.
    """
    m = n10 + n01 + 1
    tail = float(betainc(n01 + 1, n10 + 1, 0.5))
    if tail > 1e-250:  # the closed form is exact here and much faster
        return m * math.log(2) + float(betaln(n10 + 1, n01 + 1)) + math.log(tail)
    j = np.arange(n01 + 1, m + 1)
    log_binom = gammaln(m + 1) - gammaln(j + 1) - gammaln(m - j + 1)
    return float(betaln(n10 + 1, n01 + 1)) + float(logsumexp(log_binom))


@lru_cache(maxsize=1 << 16)
def log_e_value(n10: int, n01: int, alternative: Alternative = ALTERNATIVE) -> float:
    """The natural log of :func:`e_value`, finite for any counts (memoized: a pure function of
    the counts, looked up again at every wave and by ``counterfact plan``'s simulations).
    """
    if alternative == "less":
        return _log_greater(n01, n10)
    if alternative == "two-sided":
        return (n10 + n01) * math.log(2) + float(betaln(n10 + 1, n01 + 1))
    return _log_greater(n10, n01)


def e_value(n10: int, n01: int, alternative: Alternative = ALTERNATIVE) -> float:
    """The mixture e-value after ``n10`` and ``n01`` discordant pairs (1.0 with none)."""
    return math.exp(min(log_e_value(n10, n01, alternative), 700.0))


def reachable(n10: int, n01: int, remaining: int, alternative: Alternative = ALTERNATIVE) -> float:
    """The largest e-value ``remaining`` more pairs could give: every one discordant the way the
    alternative looks (either way for ``two-sided``, whose ``E`` is log-convex in the split).
    """
    r = max(remaining, 0)
    if alternative == "less":
        return e_value(n10, n01 + r, alternative)
    if alternative == "two-sided":
        return max(e_value(n10 + r, n01, alternative), e_value(n10, n01 + r, alternative))
    return e_value(n10 + r, n01, alternative)


@dataclass(frozen=True)
class Look:
    """One look at an arm after a wave: the evidence and what it decides."""

    seeds: int
    """Seeds ``0..seeds-1`` of the arm and the baseline are in."""
    n10: int
    n01: int
    e_value: float
    threshold: float
    stopped_for: StoppedFor | None
    """None: keep sampling."""
    futility_e_value: float | None = None
    """With ``min_effect``: the e-value against "the effect is at least ``min_effect``"."""
    futile_because: Literal["unreachable", "below-min-effect"] | None = None
    """Why a futile arm stopped: the threshold was out of reach, or the minimal effect was
    ruled out."""
    min_effect: float | None = None
    """The minimal effect the look was taken with (``sequential.min_effect``)."""


def look(n10: int, n01: int, *, seeds: int, pairs: int | None = None, rule: Waves) -> Look:
    """Decide after a wave that brought the arm to ``seeds`` seeds.

    Args:
        n10: discordant pairs the arm's way so far.
        n01: discordant pairs the baseline's way so far.
        seeds: seeds looked at (the arm's and the baseline's ``0..seeds-1``).
        pairs: the scored pairs among them (concordant ones included; default ``seeds``); the
            minimal-effect futility test counts the concordant pairs.
        rule: the sweep's sequential settings (cap, level, threshold, direction, minimal
            effect).
    """
    e = e_value(n10, n01, rule.alternative)
    fut: float | None = None
    if rule.min_effect is not None:
        n = seeds if pairs is None else pairs
        fut = math.exp(
            min(log_futility_e(n10, n01, n - n10 - n01, rule.min_effect, rule.alternative), 700.0)
        )
    stopped: StoppedFor | None = None
    because: Literal["unreachable", "below-min-effect"] | None = None
    if e >= rule.threshold:
        stopped = "significant"
    elif seeds >= rule.max_samples:
        stopped = "max-samples"
    elif reachable(n10, n01, rule.max_samples - seeds, rule.alternative) < 1 / rule.alpha:
        stopped, because = "futile", "unreachable"
    elif fut is not None and fut >= 1 / rule.alpha:
        stopped, because = "futile", "below-min-effect"
    return Look(seeds, n10, n01, e, rule.threshold, stopped, fut, because, rule.min_effect)


def pairs_needed(alpha: float, factor: float = 1.0, alternative: Alternative = ALTERNATIVE) -> int:
    """The fewest pairs at which the e-value can reach ``factor / alpha`` (all discordant)."""
    n = 1
    while reachable(0, 0, n, alternative) < factor / alpha:
        n += 1
    return n
