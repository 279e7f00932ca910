"""The sign-flip test over questions (verdicts/stats/clustered.py), against exact enumeration and
scipy: every p below is either brute force over all 2^k sign vectors or scipy's binomtest."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from scipy.stats import binomtest, norm

from counterfact.verdicts.stats import clustered
from counterfact.verdicts.stats.clustered import (
    QuestionCounts,
    clustered_test,
    score_interval,
    sign_flip_p,
)


def _brute(moved: list[int], alternative: str) -> float:
    """P under all 2^k equally likely sign vectors, enumerated."""
    t = sum(moved)
    sums = [
        sum(s * a for s, a in zip(signs, moved, strict=True))
        for signs in itertools.product((1, -1), repeat=len(moved))
    ]
    if alternative == "greater":
        return sum(x >= t for x in sums) / len(sums)
    if alternative == "less":
        return sum(x <= t for x in sums) / len(sums)
    up, down = sum(x >= t for x in sums) / len(sums), sum(x <= t for x in sums) / len(sums)
    return min(1.0, 2 * min(up, down))


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_p_equals_brute_force_enumeration(alternative: str) -> None:
    rng = np.random.default_rng(7)
    for _ in range(40):
        k = int(rng.integers(1, 13))
        moved = [int(x) for x in rng.integers(-6, 7, size=k)]
        p, exact = sign_flip_p(moved, alternative)  # type: ignore[arg-type]
        assert exact
        assert p == pytest.approx(_brute(moved, alternative), abs=1e-12)


def test_identical_epochs_is_the_sign_test_over_questions() -> None:
    # 7 questions broken, 3 fixed, 8 seeds each, every seed a copy: scipy's binomtest(7, 10)
    moved = [8] * 7 + [-8] * 3 + [0] * 14
    p, _ = sign_flip_p(moved, "greater")
    assert p == pytest.approx(binomtest(7, 10, 0.5, alternative="greater").pvalue)
    assert p == pytest.approx(176 / 1024)  # P(Bin(10, 1/2) >= 7), by hand


def test_one_seed_per_question_is_mcnemars_exact_test() -> None:
    # each question one pair: n10 = 9 discordant one way, 3 the other -> binomtest(9, 12)
    moved = [1] * 9 + [-1] * 3 + [0] * 20
    p, _ = sign_flip_p(moved, "greater")
    assert p == pytest.approx(binomtest(9, 12, 0.5, alternative="greater").pvalue)


def test_the_fft_path_agrees_with_direct_convolution(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    moved = [int(x) for x in rng.integers(-5, 6, size=3000)]
    p_fft, exact = sign_flip_p(moved, "greater")
    assert exact
    # the same distribution by direct convolution only (the FFT threshold out of reach)
    monkeypatch.setattr(clustered, "DIRECT_LIMIT", 10**18)
    p_direct, _ = sign_flip_p(moved, "greater")
    assert p_fft == pytest.approx(p_direct, abs=1e-12)
    # and both near the normal approximation at 3,000 questions (CLT)
    z = (sum(moved) - 0.5) / math.sqrt(sum(a * a for a in moved))
    assert p_fft == pytest.approx(float(norm.sf(z)), abs=3e-3)


def test_the_score_interval_bounds_solve_the_score_equation() -> None:
    counts = [
        QuestionCounts(f"q{i}", n10, n01, 0, 5)
        for i, (n10, n01) in enumerate(
            [(3, 0), (2, 1), (0, 0), (5, 0), (1, 2), (4, 0), (0, 1), (2, 0)] * 3
        )
    ]
    low, high, level = score_interval(counts, "greater", 0.05)
    assert level == pytest.approx(0.90)
    z = float(norm.ppf(0.95))
    a = np.array([c.moved for c in counts], float)
    n = np.array([c.pairs for c in counts], float)
    for d in (low, high):
        e = a - d * n
        assert abs(e.sum()) == pytest.approx(z * math.sqrt((e * e).sum()), rel=1e-9)
    assert low < a.sum() / n.sum() < high


def test_copies_have_as_many_effective_pairs_as_questions() -> None:
    counts = [QuestionCounts(f"q{i}", 8, 0, 0, 8) for i in range(7)] + [
        QuestionCounts(f"z{i}", 0, 0, 0, 8) for i in range(17)
    ]
    test = clustered_test(counts, "greater", 0.05)
    assert test is not None
    assert test.effective_pairs == pytest.approx(24)
    assert not test.seeds_vary
    assert (test.up, test.down, test.questions, test.pairs) == (7, 0, 24, 192)
    assert test.min_attainable_p == pytest.approx(0.5**24)


def test_independent_seeds_keep_about_all_their_pairs() -> None:
    rng = np.random.default_rng(11)
    counts = []
    for i in range(400):  # independent pairs: each discordant with probability 0.3, either way
        d = rng.random(5) < 0.3
        up = rng.random(5) < 0.5
        counts.append(QuestionCounts(f"q{i}", int((d & up).sum()), int((d & ~up).sum()), 0, 5))
    test = clustered_test(counts, "two-sided", 0.05)
    assert test is not None and test.seeds_vary
    assert 0.8 * test.pairs < test.effective_pairs <= test.pairs


def test_no_scored_pair_is_no_test() -> None:
    assert clustered_test([QuestionCounts("q", 0, 0, 0, 0)], "greater", 0.05) is None


def test_an_interval_below_zero_under_greater_agrees_with_a_non_significant_test() -> None:
    from counterfact.verdicts.armlevel import _agrees, _Judged

    def judged(low: float, high: float, verdict: str, alternative: str) -> bool | None:
        test = clustered_test([QuestionCounts("q", 0, 0, 0, 1)], "greater", 0.05)
        assert test is not None
        moved = dataclasses.replace(test, low=low, high=high)
        j = _Judged(moved, None, None, verdict, "inconclusive", None, 0, alternative)  # type: ignore[arg-type]
        return _agrees(j)

    # a clear fix, tested for a break: p = 1, interval below 0 on the untested side
    assert judged(-0.3, -0.2, "not-significant", "greater") is True
    assert judged(0.1, 0.3, "significant", "greater") is True
    assert judged(0.1, 0.3, "not-significant", "greater") is False  # the disagreement
    assert judged(-0.3, -0.2, "significant", "less") is True
    assert judged(0.1, 0.3, "not-significant", "less") is True
    assert judged(-0.3, -0.1, "not-significant", "two-sided") is False
    assert judged(-0.3, 0.1, "not-significant", "two-sided") is True


def test_an_effect_with_independent_seeds_keeps_its_effective_pairs() -> None:
    # baseline never flips, arm flips with probability 0.6 on every seed independently
    rng = np.random.default_rng(5)
    counts = [
        QuestionCounts(f"q{i}", int((rng.random(5) < 0.6).sum()), 0, 0, 5) for i in range(300)
    ]
    test = clustered_test(counts, "greater", 0.05)
    assert test is not None and test.effective_pairs > 0.8 * test.pairs


def test_moves_that_agree_exactly_still_get_an_interval_of_some_width() -> None:
    # every question moved 1 of 5 pairs: the sign-flip spread is 0 around the effect 0.2
    counts = [QuestionCounts(f"q{i}", 1, 0, 0, 5) for i in range(10)]
    test = clustered_test(counts, "greater", 0.05)
    assert test is not None and test.high - test.low > 0.1
    # copies: 3 of 3 questions broken is no more than 3 answers (p = 1/8)
    copies = clustered_test(
        [QuestionCounts(f"q{i}", 8, 0, 0, 8) for i in range(3)], "greater", 0.05
    )
    assert copies is not None and copies.low < 0.5 and copies.p_value == pytest.approx(1 / 8)


def test_copies_that_all_moved_the_same_way_have_as_many_effective_pairs_as_questions() -> None:
    # issue 43 item 6: 10 questions, 5 copied seeds each, every one broken. Each question is one
    # answer repeated 5 times, so the sample is the 10 questions (the old code found the spread
    # 0/0 and returned all 50 pairs)
    counts = [QuestionCounts(f"q{i}", 5, 0, 0, 5) for i in range(10)]
    test = clustered_test(counts, "greater", 0.05)
    assert test is not None and not test.seeds_vary
    assert test.effective_pairs == pytest.approx(10)
    # and so are copies of which none moved (A/A on a fixed API seed)
    still = [QuestionCounts(f"q{i}", 0, 0, 5 * (i % 2), 5) for i in range(10)]
    aa = clustered_test(still, "two-sided", 0.05)
    assert aa is not None and not aa.seeds_vary and aa.effective_pairs == pytest.approx(10)


def test_effective_pairs_is_the_formula_its_docstring_states() -> None:
    # N (D - A^2/N) / sum (a_q - d n_q)^2, d = A/N, kept within [Q, N]: computed here directly
    # with numpy on random counts with seeds that vary, against the module's value
    rng = np.random.default_rng(23)
    for _ in range(30):
        q = int(rng.integers(3, 40))
        n = rng.integers(2, 9, size=q)
        n10 = rng.binomial(n, 0.3)
        n01 = rng.binomial(n - n10, 0.2)
        counts = [
            QuestionCounts(f"q{i}", int(a), int(b), 0, int(m))
            for i, (a, b, m) in enumerate(zip(n10, n01, n, strict=True))
        ]
        test = clustered_test(counts, "two-sided", 0.05)
        assert test is not None
        if not test.seeds_vary:
            continue
        a = (n10 - n01).astype(float)
        big_n, big_a, big_d = float(n.sum()), float(a.sum()), float((n10 + n01).sum())
        spread = float(((a - big_a / big_n * n) ** 2).sum())
        expected = big_n * (big_d - big_a**2 / big_n) / spread
        assert test.effective_pairs == pytest.approx(min(big_n, max(q, expected)), rel=1e-12)


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
@pytest.mark.parametrize("alpha", [0.05, 0.05 / 3])
def test_the_interval_leaves_out_0_exactly_when_the_exact_test_rejects(
    alternative: str, alpha: float
) -> None:
    # issue 43 item 5: the score interval had no continuity correction and disagreed with the
    # exact p at small Q. The reference decision is the p of all 2^Q sign vectors, enumerated
    rng = np.random.default_rng(43)
    checked = 0
    for _ in range(300):
        q = int(rng.integers(2, 13))
        seeds = int(rng.integers(1, 6))
        copies = bool(rng.random() < 0.5)
        counts = []
        for i in range(q):
            shift = rng.choice([0.0, 0.3])
            if copies:
                draw = rng.random()
                n10, n01 = (
                    (seeds, 0) if draw < 0.2 + shift else ((0, seeds) if draw < 0.35 else (0, 0))
                )
            else:
                n10 = int(rng.binomial(seeds, 0.15 + shift))
                n01 = int(rng.binomial(seeds - n10, 0.15))
            if alternative == "less":  # the effect in the direction tested
                n10, n01 = n01, n10
            counts.append(QuestionCounts(f"q{i}", n10, n01, 0, seeds))
        test = clustered_test(counts, alternative, alpha)  # type: ignore[arg-type]
        assert test is not None
        rejects = _brute([c.moved for c in counts], alternative) <= alpha * (1 + 1e-9)
        if alternative == "greater":
            excludes = test.low > 0
        elif alternative == "less":
            excludes = test.high < 0
        else:
            excludes = test.low > 0 or test.high < 0
        assert excludes == rejects, counts
        checked += rejects
    assert checked >= 10  # the check saw rejections, not only non-rejections
