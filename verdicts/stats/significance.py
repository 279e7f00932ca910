"""A test with a known error rate beside every tier (rules 13, 14 and 16).

The unit is the seed pair: baseline seed ``s`` and arm seed ``s`` on one scenario.

- ``n10``: pairs where the arm flipped and the baseline did not; ``n01``: the reverse.
- Paired (default): exact one-sided McNemar test, ``p = P(Binomial(n10 + n01, 1/2) >= n10)``
  (the binomial tail counted in integers, the value ``scipy.stats.binomtest`` gives up to
  rounding; binomtest itself beyond 2,000 discordant pairs), ``p = 1`` with no discordant pair;
  the smallest p any outcome can reach is ``(1/2) ** pairs``.
- Unpaired (``statistics.pairing: none``, for runners whose seed does not control their
  randomness): Fisher's exact one-sided test on the 2x2 table of flips and non-flips of arm and
  baseline (``scipy.stats.fisher_exact``, alternative ``greater``).
- Rule 13: when the reference is the baseline's seed-0 output, pair 0 compares the baseline
  with itself, so every test leaves it out (``pairs_excluded``).
- Effect (rule 16): the paired flip-rate difference ``(n10 - n01) / pairs`` with Newcombe's
  (1998) interval for paired proportions, method 10 (Wilson score limits of both margins,
  combined with the continuity-corrected phi coefficient): Newcombe, R. G. (1998). Improved
  confidence intervals for the difference between binomial proportions based on paired data.
  Statistics in Medicine 17(22): 2635-2650.
- Similarity (rule 16, information only): one-sided Wilcoxon signed-rank test that the arm's
  similarities are lower than the baseline's on the same pairs: the exact sign-flip p
  (:mod:`~counterfact.verdicts.stats.signrank`) up to 400 nonzero differences, the normal
  approximation of ``scipy.stats.wilcoxon`` (``method="asymptotic"``) beyond.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest, fisher_exact, wilcoxon

from counterfact.defaults import ALTERNATIVE
from counterfact.probes.pairs import Pairs
from counterfact.records.parts import EffectRecord, SimilarityTestRecord
from counterfact.records.vocabulary import Alternative, Pairing
from counterfact.verdicts.stats.intervals import wilson
from counterfact.verdicts.stats.signrank import signrank


@dataclass(frozen=True)
class TestResult:
    """One challenger's test on one scenario (before multiplicity adjustment)."""

    method: str
    pairing: Pairing
    n10: int
    n01: int
    pairs: int
    pairs_excluded: int
    p_value: float
    min_attainable_p: float
    """The smallest p-value any outcome at these samples could give."""
    e_value: float | None = None
    """A sequential sweep's e-process at the arm's stopping point (``p_value = min(1, 1/e)``)."""
    alternative: Alternative = ALTERNATIVE
    """The direction tested (:data:`~counterfact.records.vocabulary.Alternative`)."""
    n11: int | None = None
    """Pairs where both flipped (the pooled effect's interval needs it)."""


_METHODS = {
    ("seed", "greater"): "exact McNemar (one-sided)",
    ("seed", "less"): "exact McNemar (one-sided, fewer flips)",
    ("seed", "two-sided"): "exact McNemar (two-sided)",
    ("none", "greater"): "Fisher exact (one-sided, unpaired)",
    ("none", "less"): "Fisher exact (one-sided, fewer flips, unpaired)",
    ("none", "two-sided"): "Fisher exact (two-sided, unpaired)",
}


def mcnemar_exact(n10: int, n01: int, alternative: Alternative = ALTERNATIVE) -> float:
    """Exact McNemar on the discordant pairs, ``n10`` ~ Binomial(n10 + n01, 1/2) under the null:
    ``greater`` is ``P(X >= n10)``, ``less`` ``P(X <= n10)``, ``two-sided`` scipy's two-sided
    binomial p (the sum of outcomes no more likely than the one seen); 1 without discordance.
    """
    n = n10 + n01
    if n == 0:
        return 1.0
    if n > EXACT_TAILS_MAX:
        return float(binomtest(n10, n, 0.5, alternative=alternative).pvalue)
    upper = _ways_at_least(n10, n)
    lower = (1 << n) - _ways_at_least(n10 + 1, n)
    if alternative == "greater":
        return upper / (1 << n)
    if alternative == "less":
        return lower / (1 << n)
    return min(1.0, 2 * min(upper, lower) / (1 << n))


EXACT_TAILS_MAX = 2000
"""Discordant pairs up to which McNemar's tails are counted in integers (a few milliseconds at
2,000); beyond, ``scipy.stats.binomtest`` computes them."""


def _ways_at_least(k: int, n: int) -> int:
    """``sum(comb(n, j) for j >= k)``: the outcomes of ``n`` fair coins with ``k`` or more
    heads, summed over the shorter side.
    """
    if k <= 0:
        return 1 << n
    if k > n:
        return 0
    if k > n // 2:
        return sum(_combs(n, k, n))
    return (1 << n) - sum(_combs(n, 0, k - 1))


def _combs(n: int, first: int, last: int) -> list[int]:
    """``comb(n, j)`` for ``j`` from ``first`` to ``last``, each from the one before."""
    term = math.comb(n, first)
    out = [term]
    for j in range(first, last):
        term = term * (n - j) // (j + 1)
        out.append(term)
    return out


def fisher_one_sided(
    arm_flips: int, arm_n: int, base_flips: int, base_n: int, alternative: Alternative = ALTERNATIVE
) -> float:
    """Fisher's exact test that the arm's flip rate is higher (``less``: lower; ``two-sided``:
    different) than the baseline's.
    """
    if arm_n == 0 or base_n == 0:
        return 1.0
    table = [[arm_flips, arm_n - arm_flips], [base_flips, base_n - base_flips]]
    return float(fisher_exact(table, alternative=alternative).pvalue)


def paired_test(
    pairs: Pairs, pairing: Pairing, alternative: Alternative = ALTERNATIVE
) -> TestResult:
    """The rule-14 test of one challenger against its baseline, in the direction asked."""
    n = pairs.size
    if pairing == "seed":
        p = mcnemar_exact(pairs.n10, pairs.n01, alternative)
    else:
        af, bf = int(pairs.arm.sum()), int(pairs.base.sum())
        p = fisher_one_sided(af, n, bf, n, alternative)
    floor = floor_of(n, pairing, alternative)
    method = _METHODS[(pairing, alternative)]
    return TestResult(
        method,
        pairing,
        pairs.n10,
        pairs.n01,
        n,
        pairs.excluded,
        p,
        floor,
        alternative=alternative,
        n11=pairs.n11,
    )


TOLERANCE = 1e-9
"""Relative slack when comparing p-values with alpha (``1/20`` computes as 0.05000000000000001)."""


def at_most(p: float, alpha: float) -> bool:
    """``p <= alpha``, robust to floating-point error in exact p-values."""
    return p <= alpha * (1 + TOLERANCE)


def floor_of(n: int, pairing: Pairing, alternative: Alternative = ALTERNATIVE) -> float:
    """The smallest p-value any outcome can give with ``n`` pairs (runs per side, unpaired):
    the most extreme outcome's probability, twice that two-sided (the two tails are mirror
    images under the null).
    """
    if n <= 0:
        return 1.0
    one = 0.5**n if pairing == "seed" else 1 / math.comb(2 * n, n)
    return min(1.0, 2 * one) if alternative == "two-sided" else one


@functools.lru_cache(maxsize=256)
def pairs_needed(
    alpha: float,
    pairing: Pairing = "seed",
    factor: float = 1.0,
    alternative: Alternative = ALTERNATIVE,
) -> int:
    """The fewest pairs at which ``factor * floor`` can reach ``alpha`` (``factor``: what the
    multiplicity adjustment multiplies the smallest p by at best).
    """
    n = 1
    while not at_most(factor * floor_of(n, pairing, alternative), alpha):
        n += 1
    return n


Effect = EffectRecord
"""Paired flip-rate difference, arm minus baseline, with its interval (the record is the result)."""


def paired_effect(pairs: Pairs, level: float = 0.95) -> Effect | None:
    """Newcombe's method-10 interval for ``P(arm flips) - P(baseline flips)`` on paired seeds."""
    return effect_of_counts(pairs.n10, pairs.n01, pairs.n11, pairs.size, level)


def effect_of_counts(n10: int, n01: int, n11: int, n: int, level: float = 0.95) -> Effect | None:
    """:func:`paired_effect` from the counts of ``n`` pairs (None when ``n`` is 0)."""
    if n == 0:
        return None
    n00 = n - n10 - n01 - n11
    p1, p2 = (n11 + n10) / n, (n11 + n01) / n
    l1, u1 = wilson(n11 + n10, n, level)
    l2, u2 = wilson(n11 + n01, n, level)
    raw = n11 * n00 - n10 * n01
    a = raw - n / 2 if raw > n / 2 else (0.0 if raw >= 0 else float(raw))
    denom = (n11 + n10) * (n01 + n00) * (n11 + n01) * (n10 + n00)
    phi = a / math.sqrt(denom) if denom else 0.0
    d = p1 - p2
    lower = math.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0))
    upper = math.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0))
    return EffectRecord(diff=d, low=max(-1.0, d - lower), high=min(1.0, d + upper), level=level)


SimilarityTest = SimilarityTestRecord
"""Wilcoxon signed-rank: are the arm's similarities lower than the baseline's, pair by pair?"""


def similarity_test(pairs: Pairs, alternative: Alternative = ALTERNATIVE) -> SimilarityTest | None:
    """None with no pair; p = 1 when every pair has equal similarity (nothing to rank).
    ``greater`` asks whether the arm's similarities are lower (it drifts from the reference more),
    ``less`` higher, ``two-sided`` either.
    """
    diffs = pairs.base_similarity - pairs.arm_similarity
    if pairs.size == 0 or np.any(np.isnan(diffs)):
        return None
    method = _WILCOXON[alternative]
    if not np.any(diffs != 0):
        return SimilarityTestRecord(statistic=0.0, p_value=1.0, method=method)
    exact = signrank(diffs, alternative)
    if exact is not None:
        return SimilarityTestRecord(
            statistic=exact.statistic(alternative),
            p_value=exact.p_value,
            method=method + ", exact sign-flip distribution",
        )
    # Many pairs: the normal approximation (tie and continuity corrected), named so that scipy
    # never picks its permutation test.
    result = wilcoxon(
        pairs.base_similarity, pairs.arm_similarity, alternative=alternative, method="asymptotic"
    )
    return SimilarityTestRecord(
        statistic=float(result.statistic), p_value=float(result.pvalue), method=method
    )


_WILCOXON = {
    "greater": "Wilcoxon signed-rank (one-sided, paired)",
    "less": "Wilcoxon signed-rank (one-sided, higher similarity, paired)",
    "two-sided": "Wilcoxon signed-rank (two-sided, paired)",
}
