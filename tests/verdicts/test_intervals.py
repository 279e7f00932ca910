"""The exact (Clopper–Pearson) flip-rate interval against published values."""

from __future__ import annotations

import pytest

from counterfact.verdicts.intervals import flip_rate_interval


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
