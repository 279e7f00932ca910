"""The similarity test's exact sign-flip p (issue 20 item 7)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import rankdata, wilcoxon

from counterfact.probes.pairs import Pairs
from counterfact.verdicts.stats.significance import similarity_test
from counterfact.verdicts.stats.signrank import signrank_exact


def _enumerated(diffs: np.ndarray, alternative: str) -> float:
    """Reference: list all 2^n sign patterns of the nonzero differences (mid-ranks), and count
    those with T+ at least (at most) the observed one."""
    nz = diffs[diffs != 0]
    ranks = rankdata(np.abs(nz))
    t = ranks[nz > 0].sum()
    sums = [
        sum(r for r, s in zip(ranks, signs, strict=True) if s)
        for signs in itertools.product((0, 1), repeat=len(nz))
    ]
    upper = np.mean([x >= t - 1e-9 for x in sums])
    lower = np.mean([x <= t + 1e-9 for x in sums])
    if alternative == "greater":
        return float(upper)
    if alternative == "less":
        return float(lower)
    return float(min(1.0, 2 * min(upper, lower)))


def test_four_differences_among_fourteen_pairs_give_the_smallest_exact_p() -> None:
    # 14 pairs, ten of them equal, four arm-lower by 0.1: scipy approximates (zeros present)
    # and reports a p below 1/16 = 0.0625, the smallest any sign pattern can give.
    base = np.ones(14)
    arm = np.array([0.9] * 4 + [1.0] * 10)
    approx = wilcoxon(base, arm, alternative="greater").pvalue
    assert approx < 0.0625
    pairs = Pairs(np.zeros(14, bool), np.zeros(14, bool), arm, base, 0)
    found = similarity_test(pairs)
    assert found is not None
    assert found.p_value == pytest.approx(1 / 16)
    assert "exact sign-flip" in found.method


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_exact_p_matches_full_enumeration_with_ties_and_zeros(alternative: str) -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        diffs = rng.choice([-0.2, -0.1, 0.0, 0.1, 0.2, 0.3], size=rng.integers(3, 12))
        got = signrank_exact(diffs, alternative)  # type: ignore[arg-type]
        assert got == pytest.approx(_enumerated(diffs, alternative), abs=1e-12)


def test_without_ties_it_matches_scipy_s_exact_test() -> None:
    # Reference: scipy's own exact distribution (method='exact'), valid without ties or zeros.
    diffs = np.array([0.31, -0.12, 0.45, 0.08, 0.27, -0.05, 0.19, 0.66, 0.02, 0.14])
    for alternative in ("greater", "less", "two-sided"):
        ref = wilcoxon(diffs, alternative=alternative, method="exact").pvalue
        assert signrank_exact(diffs, alternative) == pytest.approx(ref, rel=1e-12)  # type: ignore[arg-type]


def test_all_zero_differences_give_one_and_many_fall_back() -> None:
    assert signrank_exact(np.zeros(5), "greater") == 1.0
    assert signrank_exact(np.ones(401), "greater") is None


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_statistic_is_scipys_and_scipys_permutation_test_is_never_run(alternative: str) -> None:
    # Reference: scipy's own statistic (T+ one-sided, min(T+, T-) two-sided) with zero_method
    # 'wilcox'; 13 tied pairs are where scipy's default switches to a seconds-long permutation
    # test, and the statistic does not depend on the method (method='asymptotic' here).
    rng = np.random.default_rng(5)
    for _ in range(20):
        base = rng.choice([0.6, 0.8, 1.0], size=13)
        arm = rng.choice([0.6, 0.8, 1.0], size=13)
        if not np.any(base != arm):
            continue
        pairs = Pairs(np.zeros(13, bool), np.zeros(13, bool), arm, base, 0)
        found = similarity_test(pairs, alternative)  # type: ignore[arg-type]
        ref = wilcoxon(base, arm, alternative=alternative, method="asymptotic").statistic
        assert found is not None and found.statistic == ref
        assert found.p_value == pytest.approx(_enumerated(base - arm, alternative), abs=1e-12)


def test_beyond_the_exact_range_it_is_scipys_normal_approximation() -> None:
    # Reference: scipy's wilcoxon with method='asymptotic' (tie and continuity corrected), what
    # its default picks beyond 50 pairs.
    rng = np.random.default_rng(6)
    base, arm = rng.choice([0.5, 0.7, 0.9], size=(2, 700))
    pairs = Pairs(np.zeros(700, bool), np.zeros(700, bool), arm, base, 0)
    found = similarity_test(pairs)
    ref = wilcoxon(base, arm, alternative="greater", method="asymptotic")
    assert found is not None and "exact" not in found.method
    assert (found.statistic, found.p_value) == (ref.statistic, pytest.approx(ref.pvalue))
