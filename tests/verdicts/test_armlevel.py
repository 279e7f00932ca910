"""The level of the arm-level interval (verdicts/armlevel.py, issue 43 item 2): the interval is
built at alpha / c, c the factor the adjustment over the challengers applied to this p, so that
"p <= that level" is "adjusted p <= alpha"."""

from __future__ import annotations

import numpy as np
import pytest

from counterfact.verdicts.armlevel import adjusted_alpha
from counterfact.verdicts.stats.multiplicity import adjust, holm


def test_holm_by_hand() -> None:
    # p = 0.01, 0.035, 0.2 under Holm (by hand): 3 * 0.01, max(0.03, 2 * 0.035), max(0.07, 0.2)
    assert holm([0.035, 0.01, 0.2]) == pytest.approx([0.07, 0.03, 0.2])
    # the first in Holm's order gets the Bonferroni level alpha / 3, the second alpha / 2
    assert adjusted_alpha(0.05, 0.01, 0.03, "holm", 3) == pytest.approx(0.05 / 3)
    assert adjusted_alpha(0.05, 0.035, 0.07, "holm", 3) == pytest.approx(0.025)
    # the audit's example: p 0.035 adjusted to 0.105 is judged at 0.05 / 3 (not significant)
    assert adjusted_alpha(0.05, 0.035, 0.105, "holm", 3) == pytest.approx(0.05 / 3)
    # an adjusted p capped at 1: the largest factor, the number of challengers
    assert adjusted_alpha(0.05, 0.6, 1.0, "holm", 3) == pytest.approx(0.05 / 3)
    assert adjusted_alpha(0.05, 0.02, 0.02, "none", 3) == pytest.approx(0.05)


@pytest.mark.parametrize("method", ["holm", "bh", "by", "none"])
def test_p_within_the_level_is_the_adjusted_p_within_alpha(method: str) -> None:
    rng = np.random.default_rng(43)
    for _ in range(500):
        m = int(rng.integers(1, 7))
        p = [float(x) for x in rng.uniform(0, 0.08, size=m) ** rng.uniform(0.5, 2)]
        adjusted = adjust(p, method)  # type: ignore[arg-type]
        for raw, adj in zip(p, adjusted, strict=True):
            level = adjusted_alpha(0.05, raw, adj, method, m)  # type: ignore[arg-type]
            assert 0.05 / (m * sum(1 / i for i in range(1, m + 1))) <= level * (1 + 1e-12)
            assert level <= 0.05
            if abs(adj - 0.05) > 1e-9:  # away from a tie at alpha
                assert (raw <= level * (1 + 1e-9)) == (adj <= 0.05)


def test_a_far_tail_is_printed_as_a_bound() -> None:
    """Issue 39: p-values below 1e-40 come from a normal approximation and can be off by orders
    of magnitude, so they are printed as a bound, not a figure."""
    from counterfact.verdicts.wording.arms import _p

    assert _p(1e-41) == "< 1e-40" and _p(3e-12) == "3.0e-12" and _p(0.031) == "0.031"
