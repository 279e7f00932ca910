"""The minimal-effect futility test (``sequential.min_effect``)."""

from __future__ import annotations

import math
from functools import cache

import pytest

from counterfact.verdicts.stats.futility import log_futility_e
from counterfact.verdicts.stats.sequential import look
from counterfact.verdicts.stats.settings import Waves


@cache
def _e(n10: int, n01: int, n00: int, d: float, alternative: str = "greater") -> float:
    return math.exp(log_futility_e(n10, n01, n00, d, alternative))  # type: ignore[arg-type]


def test_no_pairs_no_evidence() -> None:
    assert _e(0, 0, 0, 0.3) == pytest.approx(1.0)


@pytest.mark.parametrize(("p10", "p01"), [(0.3, 0.0), (0.35, 0.05), (0.65, 0.35)])
def test_one_step_is_a_supermartingale_when_the_effect_is_exactly_d(p10: float, p01: float) -> None:
    # E[D] = p10 - p01 = 0.3 = d: the expected next value, computed exactly over the three
    # outcomes, is at most the current one (equal for each bet; the mixture inherits it).
    d, p00 = 0.3, 1 - p10 - p01
    for n10, n01, n00 in [(0, 0, 0), (3, 1, 5), (10, 0, 2)]:
        now = _e(n10, n01, n00, d)
        step = (
            p10 * _e(n10 + 1, n01, n00, d)
            + p01 * _e(n10, n01 + 1, n00, d)
            + p00 * _e(n10, n01, n00 + 1, d)
        )
        assert step <= now * (1 + 1e-12)


def _false_futility(pairs: int, p10: float, p01: float, d: float) -> float:
    """Exact P(the futility e-value reaches 20 within ``pairs`` pairs), by dynamic programming
    over the trinomial walk (the e-value depends on the counts only)."""
    alive, crossed = {(0, 0): 1.0}, 0.0
    p00 = 1 - p10 - p01
    for n in range(1, pairs + 1):
        nxt: dict[tuple[int, int], float] = {}
        for (a, b), mass in alive.items():
            for (na, nb), w in (((a + 1, b), p10), ((a, b + 1), p01), ((a, b), p00)):
                if w == 0:
                    continue
                if _e(na, nb, n - na - nb, d) >= 20:
                    crossed += mass * w
                else:
                    nxt[(na, nb)] = nxt.get((na, nb), 0.0) + mass * w
        alive = nxt
    return crossed


def test_ville_bound_an_effect_of_d_is_wrongly_abandoned_at_most_alpha() -> None:
    # A true effect of exactly d = 0.3 (0.4 -> 0.7 flip rates, independent: p10 = 0.7 * 0.6,
    # p01 = 0.3 * 0.4), looked at after every one of 40 pairs: below alpha = 0.05 exactly.
    assert _false_futility(40, 0.42, 0.12, 0.3) <= 0.05


def test_a_null_arm_is_ruled_out_quickly() -> None:
    # 40 concordant pairs and 2 + 2 discordant: the effect is near 0, far below d = 0.3.
    assert _e(2, 2, 40, 0.3) > 20
    assert _e(2, 2, 40, 0.3, "less") > 20
    assert _e(2, 2, 40, 0.3, "two-sided") > 20


def test_a_real_effect_is_not_ruled_out() -> None:
    # 0.1 -> 0.5: about 45% of pairs discordant the arm's way, 5% the other way.
    assert _e(18, 2, 20, 0.3) < 1
    # Mirrored for less; two-sided keeps the weaker of the two sides.
    assert _e(2, 18, 20, 0.3, "less") < 1
    assert _e(18, 2, 20, 0.3, "two-sided") < 1


def test_min_effect_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match=r"in \(0, 1\]"):
        log_futility_e(0, 0, 0, 0.0)


def test_look_stops_futile_below_the_minimal_effect() -> None:
    rule = Waves(4, 4, 200, 0.05, 20, min_effect=0.3)
    found = look(2, 2, seeds=44, pairs=44, rule=rule)
    assert found.stopped_for == "futile"
    assert found.futile_because == "below-min-effect"
    assert found.futility_e_value is not None and found.futility_e_value >= 20
    without = Waves(4, 4, 200, 0.05, 20)
    assert look(2, 2, seeds=44, pairs=44, rule=without).stopped_for is None
