"""Power of the sequential e-process (``counterfact plan`` on a sequential pilot)."""

from __future__ import annotations

from collections import defaultdict

import pytest

from counterfact.verdicts.planning.power import Cells
from counterfact.verdicts.planning.power_sequential import cap_for, sequential_power
from counterfact.verdicts.stats.sequential import e_value
from counterfact.verdicts.stats.settings import Waves, boundaries


def exact_power(cap: int, p10: float, p01: float, rule: Waves, excluded: int = 0) -> float:
    """Reference by exact dynamic programming, independent of the simulation: the distribution
    of (n10, n01) after each seed pair, the mass whose e-value reaches the threshold at a look
    removed as significant. Futility stops do not change this: an arm stopped as unreachable
    could not have reached the threshold by the cap (rule.min_effect must be None)."""
    looks = set(boundaries(rule.samples, rule.wave, cap))
    dist: dict[tuple[int, int], float] = {(0, 0): 1.0}
    rest = 1 - p10 - p01
    power = 0.0
    for seeds in range(1, cap + 1):
        if seeds > excluded:
            step: dict[tuple[int, int], float] = defaultdict(float)
            for (a, b), pr in dist.items():
                step[(a + 1, b)] += pr * p10
                step[(a, b + 1)] += pr * p01
                step[(a, b)] += pr * rest
            dist = dict(step)
        if seeds in looks:
            for key in [k for k in dist if e_value(*k, rule.alternative) >= rule.threshold]:
                power += dist.pop(key)
    return power


@pytest.mark.parametrize(
    ("alternative", "p10", "p01"),
    [("greater", 0.35, 0.1), ("less", 0.05, 0.3), ("two-sided", 0.3, 0.05)],
)
def test_simulated_power_agrees_with_exact_dynamic_programming(
    alternative: str, p10: float, p01: float
) -> None:
    rule = Waves(8, 4, 60, 0.05, 40.0, alternative)  # type: ignore[arg-type]
    for cap, excluded in ((24, 0), (60, 1)):
        sim = sequential_power(cap, Cells(p10, p01), rule, excluded, seed=5, draws=4000)
        exact = exact_power(cap, p10, p01, rule, excluded)
        assert abs(sim.power - exact) < 4 * max(sim.se, 0.002), (cap, sim, exact)
        assert 8 <= sim.mean_seeds <= cap


def test_a_null_arm_is_rarely_significant_and_futility_saves_seeds() -> None:
    plain = Waves(8, 8, 200, 0.05, 20.0, "greater")
    with_min = Waves(8, 8, 200, 0.05, 20.0, "greater", min_effect=0.3)
    a = sequential_power(200, Cells(0.1, 0.1), plain, 0, seed=2)
    b = sequential_power(200, Cells(0.1, 0.1), with_min, 0, seed=2)
    assert a.power <= 0.05 + 3 * a.se and b.power <= 0.05 + 3 * b.se
    assert b.mean_seeds < 0.5 * a.mean_seeds  # min_effect stops null arms early


def test_power_on_the_wave_grid_never_falls_as_the_cap_grows() -> None:
    # With the same draws for every cap the power on adjacent grid caps is exactly
    # non-decreasing (a shorter cap's looks are a prefix of a longer one's); independent draws
    # at each cap would dip often at this spacing (standard error ~0.011, steps ~0.01).
    rule = Waves(8, 8, 100, 0.05, 20.0, "greater")
    powers = [
        sequential_power(c, Cells(0.2, 0.1), rule, 0, seed=9).power for c in range(16, 200, 8)
    ]
    assert powers == sorted(powers) and powers[-1] > powers[0] + 0.2


@pytest.mark.parametrize(
    ("min_effect", "cells"), [(None, Cells(0.25, 0.08)), (0.3, Cells(0.45, 0.05))]
)
def test_the_one_pass_search_agrees_with_a_run_at_each_cap(
    min_effect: float | None, cells: Cells
) -> None:
    # cap_for runs once with the search's largest cap; its cap and power must be what running
    # the engine's looks at each grid cap separately gives (the same draws).
    rule = Waves(8, 8, 100, 0.05, 20.0, "greater", min_effect)
    found = cap_for(0.8, cells, rule, 1, seed=4, cap=400)
    assert found is not None
    at = {c: sequential_power(c, cells, rule, 1, seed=4).power for c in range(8, 401, 8)}
    first = min(c for c, p in at.items() if p >= 0.8)
    assert (found.cap, found.power) == (first, at[first])


def test_no_effect_the_test_s_way_is_out_of_reach() -> None:
    rule = Waves(8, 8, 100, 0.05, 20.0, "greater")
    assert cap_for(0.8, Cells(0.1, 0.2), rule, 0, seed=1, cap=200) is None
