"""The anytime-valid test of sequential sweeps (rule 19), against outside references."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import beta as beta_dist

from counterfact.verdicts.stats.sequential import (
    e_value,
    log_e_value,
    look,
    pairs_needed,
    reachable,
)
from counterfact.verdicts.stats.settings import (
    DEFAULT_STATISTICS,
    Waves,
    boundaries,
    next_boundary,
    stop_threshold,
)


@pytest.mark.parametrize(("n10", "n01"), [(0, 0), (1, 0), (0, 1), (7, 0), (12, 3), (40, 35)])
def test_e_value_is_the_mixture_integral(n10: int, n01: int) -> None:
    # Reference: the defining integral, 2 ** (n + 1) * int_{1/2}^{1} p^n10 (1-p)^n01 dp,
    # computed numerically by scipy.integrate.quad (independent of the closed form used).
    integral, _ = quad(lambda p: p**n10 * (1 - p) ** n01, 0.5, 1.0, epsabs=0, epsrel=1e-12)
    assert e_value(n10, n01) == pytest.approx(2 ** (n10 + n01 + 1) * integral, rel=1e-9)


def test_e_value_closed_form_by_hand() -> None:
    # 7 discordant pairs all the arm's way: 2^8 * (1/8) * (1 - 2^-8) = 31.875 exactly.
    assert e_value(7, 0) == pytest.approx(31.875, rel=1e-12)
    assert e_value(0, 0) == 1.0


@pytest.mark.parametrize(("n10", "n01"), [(0, 0), (3, 2), (10, 1), (0, 9)])
def test_e_process_is_a_martingale_under_the_null(n10: int, n01: int) -> None:
    # Exact one-step expectation under p = 1/2: the next discordant pair goes either way.
    step = (e_value(n10 + 1, n01) + e_value(n10, n01 + 1)) / 2
    assert step == pytest.approx(e_value(n10, n01), rel=1e-12)


def _crossing_probability(pairs: int, threshold: float) -> float:
    """Exact P(E_n >= threshold for some n <= pairs) under the null, by enumerating the
    binomial random walk (probability mass of paths not yet stopped, step by step)."""
    alive, crossed = {0: 1.0}, 0.0
    for n in range(1, pairs + 1):
        nxt: dict[int, float] = {}
        for b, mass in alive.items():
            for nb in (b, b + 1):
                if e_value(nb, n - nb) >= threshold:
                    crossed += mass / 2
                else:
                    nxt[nb] = nxt.get(nb, 0.0) + mass / 2
        alive = nxt
    return crossed


@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_ville_bound_holds_under_continuous_monitoring(alpha: float) -> None:
    # Looking after every one of 200 discordant pairs, the chance of ever crossing 1/alpha under
    # the null is below alpha (exact enumeration; 0.0319 at alpha 0.05).
    assert _crossing_probability(200, 1 / alpha) <= alpha


def test_power_under_a_strong_effect_by_enumeration() -> None:
    # The arm's way with p = 0.9: the chance of crossing 20 within 30 discordant pairs, exactly.
    alive, crossed = {0: 1.0}, 0.0
    for n in range(1, 31):
        nxt: dict[int, float] = {}
        for b, mass in alive.items():
            for nb, w in ((b + 1, 0.9), (b, 0.1)):
                if e_value(nb, n - nb) >= 20:
                    crossed += mass * w
                else:
                    nxt[nb] = nxt.get(nb, 0.0) + mass * w
        alive = nxt
    assert crossed > 0.95


def test_stops_exactly_when_the_threshold_is_crossed() -> None:
    # e(6, 0) = 18.14 < 20 <= e(7, 0) = 31.875: a run of arm-way pairs stops at the 7th.
    decisions = [
        look(k, 0, seeds=k, rule=Waves(4, 4, 100, 0.05, 20)).stopped_for for k in range(1, 9)
    ]
    assert decisions == [None] * 6 + ["significant", "significant"]


def test_futile_exactly_when_the_threshold_is_unreachable() -> None:
    # No discordance at all: 1/alpha = 20 stays reachable while 7 pairs remain (e(7,0) = 31.9)
    # and becomes unreachable with 6 left (e(6,0) = 18.1): futile at seed 94 of 100.
    decisions = {
        s: look(0, 0, seeds=s, rule=Waves(4, 4, 100, 0.05, 20)).stopped_for
        for s in (92, 93, 94, 95)
    }
    assert decisions == {92: None, 93: None, 94: "futile", 95: "futile"}


def test_futility_uses_the_level_not_the_family_threshold() -> None:
    # With a family threshold of 60 an arm at e = 31.9 can still become significant by BH at
    # another rank, so it is not futile while 1/alpha is reachable.
    assert reachable(7, 0, 0) == pytest.approx(31.875)
    found = look(7, 0, seeds=10, rule=Waves(4, 4, 10, 0.05, 60))
    assert found.stopped_for == "max-samples"
    assert look(7, 0, seeds=10, rule=Waves(4, 4, 12, 0.05, 60)).stopped_for is None


def test_cap_decides_when_nothing_else_does() -> None:
    assert look(3, 3, seeds=40, rule=Waves(4, 4, 40, 0.05, 20)).stopped_for == ("max-samples")


def test_thresholds_per_adjustment() -> None:
    assert stop_threshold(0.05, "none", 4) == pytest.approx(20)
    assert stop_threshold(0.05, "holm", 4) == pytest.approx(80)
    assert stop_threshold(0.05, "bh", 4) == pytest.approx(80)
    # BY: K * H_K / alpha, H_4 = 25/12.
    assert stop_threshold(0.05, "by", 4) == pytest.approx(4 * 25 / 12 / 0.05)


def test_pairs_needed_matches_the_e_values() -> None:
    assert pairs_needed(0.05) == 7  # e(6,0) = 18.1 < 20 <= e(7,0)
    n = pairs_needed(0.05, 3.0)
    assert e_value(n, 0) >= 60 > e_value(n - 1, 0)


def test_wave_boundaries() -> None:
    assert boundaries(4, 4, 10) == [4, 8, 10]
    assert boundaries(5, 5, 5) == [5]
    assert [next_boundary(s, 4, 3, 12) for s in (0, 4, 7, 10, 12)] == [4, 7, 10, 12, 12]


def test_small_aa_calibration_with_fixed_seeds() -> None:
    # 400 simulated A/A arms, both sides flipping at 0.3 independently, looked at every 4 seeds
    # up to 100: the false-significant rate stays at or below alpha = 0.05. Its exact
    # Clopper-Pearson 95% interval (scipy's beta quantiles) must contain a value <= alpha.
    rng = np.random.default_rng(20261130)
    hits = 0
    sweeps = 400
    for _ in range(sweeps):
        arm = rng.random(100) < 0.3
        base = rng.random(100) < 0.3
        for seeds in boundaries(4, 4, 100):
            n10 = int(np.sum(arm[:seeds] & ~base[:seeds]))
            n01 = int(np.sum(~arm[:seeds] & base[:seeds]))
            found = look(n10, n01, seeds=seeds, rule=Waves(4, 4, 100, 0.05, 20))
            if found.stopped_for is not None:
                hits += found.stopped_for == "significant"
                break
    low = beta_dist.ppf(0.025, hits, sweeps - hits + 1) if hits else 0.0
    assert hits / sweeps <= 0.05 or low <= 0.05


def test_e_value_stays_finite_with_thousands_of_pairs() -> None:
    # The closed form through scipy.special.betainc underflows near n01 = 1075; the log-space
    # tail does not. Reference by hand: with every pair the arm's way (n01 = 0) the integral is
    # 2**(n+1) * (1 - 2**-(n+1)) / (n+1), so log E = (n+1) log 2 - log(n+1) to 1e-600.
    for n01 in (1100, 5000):
        got = log_e_value(0, n01)
        assert math.isfinite(got) and got < 0
    n = 2000
    assert log_e_value(n, 0) == pytest.approx((n + 1) * math.log(2) - math.log(n + 1), rel=1e-12)


def test_log_space_tail_agrees_with_the_closed_form() -> None:
    # Where both are computable the two forms agree (the switch is at a tail of 1e-250).
    from scipy.special import betaln, gammaln, logsumexp

    for n10, n01 in ((3, 900), (50, 1000), (0, 820)):
        m = n10 + n01 + 1
        j = np.arange(n01 + 1, m + 1)
        direct = betaln(n10 + 1, n01 + 1) + logsumexp(
            gammaln(m + 1) - gammaln(j + 1) - gammaln(m - j + 1)
        )
        assert log_e_value(n10, n01) == pytest.approx(direct, rel=1e-10)


def test_pooled_e_values_do_not_overflow_with_many_scenarios() -> None:
    # 300 scenarios each stopped at e = 630: the product is e**(300 ln 630), far past a float;
    # p must come out as 0 (well, its float), not an OverflowError.
    from counterfact.records.parts import TestRecord
    from counterfact.verdicts.stopped import pooled_e

    def row(scenario: int) -> object:
        test = TestRecord(
            method="e",
            pairing="seed",
            n10=12,
            n01=0,
            pairs=12,
            pairs_excluded=0,
            p_value=1 / 630,
            alpha=0.05,
            min_attainable_p=1 / 630,
            e_value=630.0,
        )
        return _Row(f"s{scenario}", "arm", test)

    (record,) = pooled_e([row(i) for i in range(300)], DEFAULT_STATISTICS)  # type: ignore[arg-type]
    assert record.p_value == 0.0 and record.secondary_reading == "significant"
    assert math.isfinite(record.e_value or math.inf)


class _Row:
    """The fields pooled_e reads from a verdict row."""

    def __init__(self, scenario: str, arm: str, test: object) -> None:
        self.scenario, self.arm, self.test, self.is_baseline = scenario, arm, test, False


@pytest.mark.parametrize(("n10", "n01"), [(0, 0), (1, 0), (0, 1), (0, 7), (3, 12), (35, 40)])
def test_less_and_two_sided_e_values_are_their_mixture_integrals(n10: int, n01: int) -> None:
    # Reference: the defining integrals, computed numerically by scipy.integrate.quad: the
    # uniform prior on [0, 1/2] (the arm flips less) and on [0, 1] (either way).
    def f(p: float) -> float:
        return float(p**n10 * (1 - p) ** n01)

    n = n10 + n01
    low, _ = quad(f, 0.0, 0.5, epsabs=0, epsrel=1e-12)
    whole, _ = quad(f, 0.0, 1.0, epsabs=0, epsrel=1e-12)
    assert e_value(n10, n01, "less") == pytest.approx(2 ** (n + 1) * low, rel=1e-9)
    assert e_value(n10, n01, "two-sided") == pytest.approx(2**n * whole, rel=1e-9)


def test_two_sided_is_the_mean_of_the_one_sided_e_values() -> None:
    for n10, n01 in [(0, 0), (5, 1), (1, 5), (20, 20)]:
        mean = (e_value(n10, n01, "greater") + e_value(n10, n01, "less")) / 2
        assert e_value(n10, n01, "two-sided") == pytest.approx(mean, rel=1e-12)


def _crossing(pairs: int, threshold: float, alternative: str) -> float:
    """Exact P(E_n >= threshold for some n <= pairs) under p = 1/2, as above, per direction."""
    alive, crossed = {0: 1.0}, 0.0
    for n in range(1, pairs + 1):
        nxt: dict[int, float] = {}
        for b, mass in alive.items():
            for nb in (b, b + 1):
                if e_value(nb, n - nb, alternative) >= threshold:  # type: ignore[arg-type]
                    crossed += mass / 2
                else:
                    nxt[nb] = nxt.get(nb, 0.0) + mass / 2
        alive = nxt
    return crossed


@pytest.mark.parametrize("alternative", ["less", "two-sided"])
def test_ville_bound_holds_for_every_direction(alternative: str) -> None:
    # Exact enumeration of 200 discordant pairs, looked at after each: below alpha = 0.05.
    assert _crossing(200, 20, alternative) <= 0.05


def test_reachable_and_pairs_needed_look_the_alternative_s_way() -> None:
    assert reachable(0, 0, 7, "less") == e_value(0, 7, "less") == e_value(7, 0)
    assert reachable(2, 0, 5, "two-sided") == e_value(7, 0, "two-sided")
    assert reachable(0, 2, 5, "two-sided") == e_value(0, 7, "two-sided")
    assert pairs_needed(0.05, 1.0, "less") == pairs_needed(0.05)
    # Two-sided spreads the prior over both ways, so it needs more pairs: 2^n/(n+1) >= 20 first
    # at n = 8 (256/9 = 28.4; n = 7 gives 16), against 2^(n+1)/(n+1) (1 - 2^-(n+1)) at n = 7.
    assert pairs_needed(0.05) == 7
    assert pairs_needed(0.05, 1.0, "two-sided") == 8


def test_a_fix_stops_significant_under_less_and_not_under_greater() -> None:
    waves = Waves(4, 4, 100, 0.05, 20)
    assert look(0, 9, seeds=12, rule=waves).stopped_for is None
    less = Waves(4, 4, 100, 0.05, 20, alternative="less")
    assert look(0, 9, seeds=12, rule=less).stopped_for == "significant"
