"""The pooled effect across scenarios: cluster-robust interval and heterogeneity flag."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import chi2
from scipy.stats import t as student_t

from counterfact.verdicts.stats.pooled import Stratum, pooled_effect
from counterfact.verdicts.stats.significance import effect_of_counts


def test_cr1_interval_matches_a_hand_computation() -> None:
    # Four scenarios of 20 pairs whose effects differ (+0.4, +0.3, +0.1, -0.1).
    strata = [
        Stratum("a", 9, 1, 2, 20),
        Stratum("b", 7, 1, 1, 20),
        Stratum("c", 4, 2, 3, 20),
        Stratum("d", 1, 3, 2, 20),
    ]
    found = pooled_effect(strata)
    assert found is not None
    # Reference, by hand with numpy: the ratio estimator and its CR1 variance, t on 3 df.
    a = np.array([8, 6, 2, -2], dtype=float)
    n = np.full(4, 20.0)
    r = a.sum() / n.sum()
    se = math.sqrt(4 / 3 * np.sum((a - r * n) ** 2)) / n.sum()
    half = student_t.ppf(0.975, 3) * se
    newcombe = effect_of_counts(21, 7, 8, 80)
    assert newcombe is not None
    assert found.diff == pytest.approx(0.175)
    # The clustered interval is the wider one here (the scenarios disagree).
    assert found.low == pytest.approx(min(r - half, newcombe.low))
    assert found.high == pytest.approx(max(r + half, newcombe.high))
    assert found.high - found.low > newcombe.high - newcombe.low


def test_agreeing_scenarios_fall_back_to_newcombe_not_to_zero_width() -> None:
    # Identical scenarios: the CR1 variance is 0; the interval is Newcombe's on the sums.
    strata = [Stratum(s, 3, 1, 0, 10) for s in "abc"]
    found = pooled_effect(strata)
    newcombe = effect_of_counts(9, 3, 0, 30)
    assert found is not None and newcombe is not None
    assert (found.low, found.high) == pytest.approx((newcombe.low, newcombe.high))
    assert not found.heterogeneous and found.i_squared == 0.0


def test_cochran_q_by_hand_and_the_disagreeing_scenario_is_named() -> None:
    # Five scenarios at +0.0 and one at +0.8 (40 pairs each).
    strata = [Stratum(f"s{i}", 2, 2, 1, 40) for i in range(5)] + [Stratum("odd", 33, 1, 0, 40)]
    found = pooled_effect(strata)
    assert found is not None
    # Reference: Cochran's Q with the second-moment variances (n10 + n01 + 1) / ((n + 1) n),
    # computed here step by step.
    d, w = [], []
    for s in strata:
        d.append((s.n10 - s.n01) / s.pairs)
        w.append((s.pairs + 1) * s.pairs / (s.n10 + s.n01 + 1))
    mean = np.average(d, weights=w)
    q = float(np.sum(np.array(w) * (np.array(d) - mean) ** 2))
    assert found.heterogeneity_p == pytest.approx(chi2.sf(q, 5))
    assert found.i_squared == pytest.approx((q - 5) / q)
    assert found.heterogeneous and found.disagreeing == ("odd",)


def test_one_scenario_has_no_heterogeneity_and_no_pairs_no_effect() -> None:
    one = pooled_effect([Stratum("a", 3, 1, 0, 10)])
    assert one is not None and one.heterogeneity_p is None and not one.heterogeneous
    assert pooled_effect([Stratum("a", 0, 0, 0, 0)]) is None
