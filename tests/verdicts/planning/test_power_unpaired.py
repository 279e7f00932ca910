"""Power of the unpaired test (``pairing: none``, Fisher's exact test) for ``counterfact plan``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import fisher_exact

from counterfact.verdicts.planning.power_unpaired import fisher_critical, unpaired_power
from counterfact.verdicts.stats.significance import at_most, fisher_one_sided


def _brute_power(n: int, pa: float, pb: float, level: float, alternative: str) -> float:
    """Reference: every table (x arm flips, y baseline flips) of n runs a side, its binomial
    probability, and whether scipy's fisher_exact (through the engine's own call) rejects it."""
    total = 0.0
    for x in range(n + 1):
        for y in range(n + 1):
            p = fisher_one_sided(x, n, y, n, alternative)  # type: ignore[arg-type]
            if at_most(p, level):
                total += (
                    math.comb(n, x)
                    * pa**x
                    * (1 - pa) ** (n - x)
                    * math.comb(n, y)
                    * pb**y
                    * (1 - pb) ** (n - y)
                )
    return total


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
@pytest.mark.parametrize(("n", "pa", "pb"), [(10, 0.6, 0.1), (16, 0.1, 0.45), (21, 0.3, 0.3)])
def test_exact_power_matches_brute_force_enumeration_with_scipy_fisher(
    n: int, pa: float, pb: float, alternative: str
) -> None:
    got = unpaired_power(n, pa, pb, 0.05, alternative)  # type: ignore[arg-type]
    assert got == pytest.approx(_brute_power(n, pa, pb, 0.05, alternative), abs=1e-9)


def test_critical_values_are_scipy_s_one_sided_fisher() -> None:
    # Reference: per flip total t, the smallest arm count whose scipy one-sided p is <= level.
    n = 14
    totals = np.arange(0, 2 * n + 1)
    for level in (0.05, 0.01):
        for t, c in zip(totals, fisher_critical(totals, n, level), strict=True):
            xs = range(max(0, t - n), min(t, n) + 1)
            tables = [[[x, n - x], [t - x, n - t + x]] for x in xs]
            scan = next(
                (
                    x
                    for x, tab in zip(xs, tables, strict=True)
                    if at_most(fisher_exact(tab, alternative="greater").pvalue, level)
                ),
                min(t, n) + 1,
            )
            assert c == scan, (t, level)


def test_large_samples_agree_with_a_simulation_through_scipy() -> None:
    # At n = 400 the enumeration is truncated (TAIL); a simulation through scipy's fisher_exact
    # (fixed seed, 3,000 draws) must agree within 4 standard errors.
    n, pa, pb = 400, 0.16, 0.1
    exact = unpaired_power(n, pa, pb, 0.01, "greater")
    rng = np.random.default_rng(3)
    draws = 3000
    x, y = rng.binomial(n, pa, draws), rng.binomial(n, pb, draws)
    hits = sum(
        fisher_exact([[a, n - a], [b, n - b]], alternative="greater").pvalue <= 0.01
        for a, b in zip(x, y, strict=True)
    )
    se = math.sqrt(exact * (1 - exact) / draws)
    assert 0.2 < exact < 0.9 and abs(hits / draws - exact) < 4 * se


def test_no_effect_has_power_at_most_the_level() -> None:
    for n in (5, 30, 200):
        assert unpaired_power(n, 0.2, 0.2, 0.05, "greater") <= 0.05
        assert unpaired_power(n, 0.2, 0.2, 0.05, "two-sided") <= 0.05
        assert unpaired_power(n, 0.2, 0.2, 0.05, "less") <= 0.05
