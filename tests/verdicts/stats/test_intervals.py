"""The exact (Clopper–Pearson) flip-rate interval against published values."""

from __future__ import annotations

import itertools

import pytest
from scipy.stats import binomtest

from counterfact.verdicts.stats.intervals import flip_rate_interval, wilson


def test_zero_flips_upper_bound_closed_form() -> None:
    # For k = 0 the exact upper bound is 1 - (alpha/2)^(1/n): 1 - 0.025**(1/5) = 0.52182.
    ci = flip_rate_interval(0, 5)
    assert ci is not None
    assert ci.low == 0.0
    assert ci.high == pytest.approx(1 - 0.025 ** (1 / 5), abs=1e-9)
    assert (ci.method, ci.level) == ("clopper-pearson", 0.95)


def test_all_flips_lower_bound_closed_form() -> None:
    # For k = n the exact lower bound is (alpha/2)^(1/n): 0.025**(1/3) = 0.29240.
    ci = flip_rate_interval(3, 3)
    assert ci is not None
    assert ci.low == pytest.approx(0.025 ** (1 / 3), abs=1e-9)
    assert ci.high == 1.0


def test_two_of_five_matches_r_binom_test() -> None:
    # R 4.x: binom.test(2, 5)$conf.int -> 0.05274495 0.85336720
    ci = flip_rate_interval(2, 5)
    assert ci is not None
    assert (ci.low, ci.high) == (
        pytest.approx(0.05274495, abs=1e-7),
        pytest.approx(0.8533672, abs=1e-7),
    )


def test_no_samples_no_interval() -> None:
    assert flip_rate_interval(0, 0) is None


@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_bounds_are_scipys_root_found_ones_for_every_count(level: float) -> None:
    # Reference: scipy.stats.binomtest(k, n).proportion_ci(method="exact"), which finds each
    # bound with brentq (xtol 2e-12); the beta quantiles are the same bounds in closed form.
    sizes = [*range(1, 41), 100, 1000, 10000]
    for n in sizes:
        for k in range(n + 1) if n <= 40 else (0, 1, 2, n // 3, n // 2, n - 1, n):
            want = binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
            got = flip_rate_interval(k, n, level)
            assert got is not None
            assert got.low == pytest.approx(want.low, abs=2e-12), (k, n)
            assert got.high == pytest.approx(want.high, abs=2e-12), (k, n)
            assert (k == 0) == (got.low == 0.0) and (k == n) == (got.high == 1.0)


def test_wilson_is_scipys_wilson_interval_exactly() -> None:
    # Reference: scipy.stats.binomtest(k, n).proportion_ci(method="wilson"), the same closed form.
    for n, level in itertools.product([*range(1, 31), 200, 5000], (0.9, 0.95, 0.99)):
        for k in range(n + 1) if n <= 30 else (0, 1, n // 2, n - 1, n):
            want = binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
            assert wilson(k, n, level) == (want.low, want.high), (k, n, level)
