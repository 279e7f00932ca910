"""The test beside every tier, against exact values (rules 13, 14, 16)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binomtest, wilcoxon

from counterfact import compare_arms
from counterfact.probes.pairs import Pairs
from counterfact.verdicts.stats.significance import (
    fisher_one_sided,
    mcnemar_exact,
    paired_effect,
    paired_test,
    pairs_needed,
    similarity_test,
)


def pairs(
    arm: list[int], base: list[int], sims: tuple[list[float], list[float]] | None = None
) -> Pairs:
    a, b = np.array(arm, dtype=bool), np.array(base, dtype=bool)
    sa, sb = sims or ([0.5] * len(arm), [0.5] * len(arm))
    return Pairs(a, b, np.array(sa, dtype=float), np.array(sb, dtype=float), 0)


def test_mcnemar_matches_exact_binomial_tails() -> None:
    # P(Bin(n, 1/2) >= k) by enumeration: sum C(n, j) / 2^n for j >= k.
    def tail(k: int, n: int) -> float:
        return sum(math.comb(n, j) for j in range(k, n + 1)) / 2**n

    assert mcnemar_exact(5, 0) == pytest.approx(1 / 32)  # 0/10 -> 5/10 on paired seeds: 0.031
    assert mcnemar_exact(7, 1) == pytest.approx(9 / 256)  # 7 of 8 discordant: 0.035
    for n10, n01 in itertools.product(range(6), range(6)):
        if n10 + n01:
            assert mcnemar_exact(n10, n01) == pytest.approx(tail(n10, n10 + n01))
    assert mcnemar_exact(0, 0) == 1.0


def test_fisher_one_sided_matches_the_hypergeometric_tail() -> None:
    # [[5, 0], [0, 5]]: the only table at least as extreme; P = 1 / C(10, 5) = 1/252.
    assert fisher_one_sided(5, 5, 0, 5) == pytest.approx(1 / 252)
    # [[3, 2], [1, 4]]: P(X >= 3), X ~ Hypergeom(10 total, 4 flips, 5 drawn) = (40 + 5) / 252.
    assert fisher_one_sided(3, 5, 1, 5) == pytest.approx(
        (math.comb(4, 3) * math.comb(6, 2) + math.comb(4, 4) * math.comb(6, 1)) / 252
    )


def test_paired_test_counts_discordant_pairs_and_its_floor() -> None:
    got = paired_test(pairs([1, 1, 1, 0, 0, 1], [0, 0, 1, 0, 1, 0]), "seed")
    assert (got.n10, got.n01, got.pairs) == (3, 1, 6)
    assert got.p_value == pytest.approx(5 / 16)  # P(Bin(4, 1/2) >= 3)
    assert got.min_attainable_p == pytest.approx(1 / 64)


def test_three_samples_cannot_reach_five_percent() -> None:
    got = paired_test(pairs([1, 1, 1], [0, 0, 0]), "seed")
    assert got.p_value == pytest.approx(1 / 8) and got.min_attainable_p > 0.05
    assert pairs_needed(0.05) == 5  # 0.5^5 = 0.031 <= 0.05 < 0.5^4


def test_effect_interval_covers_like_a_95_percent_interval() -> None:
    # Exact enumeration of every 2x2 paired outcome of n = 12 pairs under four true cell
    # probabilities: the coverage of Newcombe's method 10 (nominal 95%) must stay near it.
    n = 12
    for p11, p10, p01 in [(0.1, 0.3, 0.1), (0.0, 0.5, 0.0), (0.2, 0.1, 0.1), (0.05, 0.05, 0.4)]:
        p00 = 1 - p11 - p10 - p01
        truth = p10 - p01
        covered = 0.0
        for a in range(n + 1):
            for b in range(n + 1 - a):
                for c in range(n + 1 - a - b):
                    d = n - a - b - c
                    prob = math.factorial(n) / (
                        math.factorial(a)
                        * math.factorial(b)
                        * math.factorial(c)
                        * math.factorial(d)
                    )
                    prob *= p11**a * p10**b * p01**c * p00**d
                    eff = paired_effect(
                        pairs(
                            [1] * a + [1] * b + [0] * c + [0] * d,
                            [1] * a + [0] * b + [1] * c + [0] * d,
                        )
                    )
                    assert eff is not None and eff.low <= eff.diff <= eff.high
                    covered += prob * (eff.low - 1e-12 <= truth <= eff.high + 1e-12)
        assert covered >= 0.92, (p11, p10, p01, covered)


def test_similarity_test_is_scipys_wilcoxon_on_the_pairs() -> None:
    base, arm = [0.9, 0.95, 0.8, 0.99, 0.7], [0.5, 0.96, 0.4, 0.6, 0.65]
    got = similarity_test(pairs([0] * 5, [0] * 5, (arm, base)))
    want = wilcoxon(base, arm, alternative="greater")
    assert got is not None and got.p_value == pytest.approx(want.pvalue)
    same = similarity_test(pairs([0] * 3, [0] * 3, ([0.5] * 3, [0.5] * 3)))
    assert same is not None and same.p_value == 1.0


def test_an_arm_tiers_call_minority_flip_is_significant_by_the_test() -> None:
    # 0/10 -> 5/10 on paired seeds: the tier says "not a majority"; the test says p = 1/32.
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"m": 1}}],
        lambda ctx: "no" if ctx.arm.id == "alt" and ctx.seed < 5 else "yes",
        samples=10,
        reference="yes",
        comparator="exact",
        executor="local",
    )
    alt = result.row("alt")
    assert (alt.verdict, alt.reason) == ("inconclusive", "minority-flip")
    assert alt.statistical_verdict == "significant" and alt.test is not None
    assert alt.test.p_value == pytest.approx(1 / 32) and alt.test.p_adjusted == pytest.approx(
        1 / 32
    )
    assert (
        "5 of 5 discordant seeds went the arm's way, p = 0.0312 — significant at 0.05" in alt.claim
    )


def test_seed_zero_is_left_out_when_it_is_the_reference() -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"m": 1}}],
        lambda ctx: "no" if ctx.arm.id == "alt" else "yes",
        samples=6,
        comparator="exact",
        executor="local",
    )
    test = result.row("alt").test
    assert test is not None and (test.pairs, test.pairs_excluded, test.n10) == (5, 1, 5)
    assert "seed 0 left out" in result.row("alt").claim


def test_unpaired_at_three_samples_can_reach_five_percent_exactly() -> None:
    # Fisher, 3 of 3 against 0 of 3: p = 1 / C(6, 3) = 1/20 = 0.05 (floating point 0.0500...01).
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"m": 1}}],
        lambda ctx: "no" if ctx.arm.id == "alt" else "yes",
        samples=3,
        reference="yes",
        comparator="exact",
        executor="local",
        statistics={"pairing": "none"},
    )
    alt = result.row("alt")
    assert alt.test is not None and alt.test.min_attainable_p == pytest.approx(1 / 20)
    assert alt.statistical_verdict == "significant"


def test_no_test_for_an_arm_that_did_not_take_effect() -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"m": 1}}],
        lambda ctx: {"output": "no" if ctx.arm.id == "alt" else "yes", "manifest": {"m": 0}},
        samples=8,
        reference="yes",
        comparator="exact",
        executor="local",
    )
    alt = result.row("alt")
    assert alt.reason == "arm-not-applied" and alt.test is None and alt.statistical_verdict is None
    assert alt.statistical_verdict_withheld == "arm-not-applied"
    assert "Statistical test" not in alt.claim


def test_the_baselines_claim_says_its_stability_rests_on_the_other_seeds() -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"m": 1}}],
        lambda ctx: "yes",
        samples=6,
        comparator="exact",
        executor="local",
    )
    assert (
        "its stability rests on the other 5: seed 0's output is the reference"
        in result.row("base").claim
    )


def test_seed_zero_is_not_evidence_in_the_band_or_the_baselines_interval() -> None:
    # The baseline's seed-0 output is the reference: its similarity with itself is 1.0 and would
    # widen the band and shrink the interval. Both rest on seeds 1..5 (rule 13).
    outputs = [
        "The answer is 42.",
        "The answer is 42!",
        "The answer is 42..",
        "the answer is 42.",
        "The answer is 42 .",
        "The answer is: 42.",
    ]
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"m": 1}}],
        lambda ctx: outputs[ctx.seed],
        samples=6,
        executor="local",
    )
    band = result.summary.scenarios[0].null_band
    base = result.row("base")
    assert band is not None and band.similarity.max < 1.0  # seed 0's 1.0 is not in it
    interval = base.flip_rate_ci
    from scipy.stats import binomtest

    want = binomtest(0, 5).proportion_ci(method="exact")  # 0 flips over the 5 other seeds
    assert interval is not None and interval.high == pytest.approx(want.high)


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_mcnemar_counted_in_integers_is_scipys_binomial_test(alternative: str) -> None:
    # Reference: scipy.stats.binomtest(n10, n10 + n01, 0.5), which computes the same tails in
    # floating point; past 2,000 discordant pairs it is what mcnemar_exact calls.
    for n10, n01 in [
        *itertools.product(range(0, 60, 3), range(0, 60, 4)),
        (900, 1000),
        (1500, 900),
    ]:
        if n10 + n01:
            want = binomtest(n10, n10 + n01, 0.5, alternative=alternative).pvalue
            got = mcnemar_exact(n10, n01, alternative)  # type: ignore[arg-type]
            assert got == pytest.approx(want, rel=1e-12), (n10, n01)
