"""Power of the paired test and the samples that reach it (``counterfact plan``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from counterfact.verdicts.planning.power import (
    Cells,
    critical,
    paired_power,
    per_test_level,
    pooled_power,
    samples_for,
)
from counterfact.verdicts.stats.significance import at_most, mcnemar_exact


def _brute_power(n: int, p10: float, p01: float, level: float, alternative: str) -> float:
    """Reference: every outcome (n10, n01, concordant) of n pairs, its multinomial probability,
    and whether the engine's own mcnemar_exact rejects it."""
    total = 0.0
    rest = 1 - p10 - p01
    for a in range(n + 1):
        for b in range(n + 1 - a):
            prob = math.comb(n, a) * math.comb(n - a, b) * p10**a * p01**b * rest ** (n - a - b)
            if at_most(mcnemar_exact(a, b, alternative), level):  # type: ignore[arg-type]
                total += prob
    return total


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
@pytest.mark.parametrize(("n", "p10", "p01"), [(12, 0.4, 0.05), (20, 0.1, 0.3), (25, 0.2, 0.2)])
def test_exact_power_matches_brute_force_enumeration(
    n: int, p10: float, p01: float, alternative: str
) -> None:
    got = paired_power(n, p10, p01, 0.05, alternative)  # type: ignore[arg-type]
    assert got == pytest.approx(_brute_power(n, p10, p01, 0.05, alternative), abs=1e-12)


def test_critical_values_are_the_exact_test_s() -> None:
    # Reference: the smallest c with mcnemar_exact(c, m - c) <= level, found by scanning.
    for level in (0.05, 0.0125, 0.001):
        m = np.arange(0, 60)
        for mm, c in zip(m, critical(m, level), strict=True):
            scan = next(
                (k for k in range(mm + 1) if at_most(mcnemar_exact(k, mm - k), level)), mm + 1
            )
            assert c == scan


def test_levels_are_the_bonferroni_bounds() -> None:
    assert per_test_level(0.05, "holm", 10) == pytest.approx(0.005)
    assert per_test_level(0.05, "bh", 4) == pytest.approx(0.0125)
    assert per_test_level(0.05, "by", 3) == pytest.approx(0.05 / (3 * (1 + 1 / 2 + 1 / 3)))
    assert per_test_level(0.05, "none", 10) == 0.05


def test_pooled_power_with_one_scenario_is_the_exact_power() -> None:
    rng = np.random.default_rng(1)
    sim, se = pooled_power(30, [Cells(0.3, 0.05)], 0.05, "greater", rng, draws=40_000)
    exact = paired_power(30, 0.3, 0.05, 0.05, "greater")
    assert abs(sim - exact) < 4 * se


def test_samples_for_finds_the_first_count_that_reaches_the_target() -> None:
    def power(n: int) -> float:
        return paired_power(n, 0.3, 0.05, 0.05, "greater")

    found = samples_for(0.8, power)
    assert found is not None
    n, p = found
    assert p >= 0.8 and power(n) == p
    assert all(power(k) < 0.8 for k in range(2, n))  # monotone enough here: none earlier
    assert samples_for(0.8, lambda n: 0.04, cap=64) is None  # no effect: never reached
