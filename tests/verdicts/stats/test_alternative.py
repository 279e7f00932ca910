"""``statistics.alternative`` (issue 19 item 2): every fixed-sample test looks the way asked.

Reference values are computed here by exact enumeration of the binomial null (math.comb), not by
scipy, which the code under test calls.
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
from scipy.stats import binomtest, fisher_exact

from counterfact import RunContext, compare_arms
from counterfact.verdicts.stats.significance import at_most, floor_of, mcnemar_exact

from ...helpers import after_standing


def _pmf(k: int, n: int) -> float:
    return math.comb(n, k) / 2**n


def reference_p(n10: int, n01: int, alternative: str) -> float:
    """Exact McNemar by enumeration: n10 ~ Binomial(n10 + n01, 1/2) under the null; two-sided
    sums every outcome no more likely than the one seen (the binomial test's usual definition).
    """
    n = n10 + n01
    if n == 0:
        return 1.0
    if alternative == "greater":
        return sum(_pmf(k, n) for k in range(n10, n + 1))
    if alternative == "less":
        return sum(_pmf(k, n) for k in range(n10 + 1))
    seen = _pmf(n10, n)
    return min(1.0, sum(_pmf(k, n) for k in range(n + 1) if _pmf(k, n) <= seen * (1 + 1e-7)))


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
@pytest.mark.parametrize(
    ("n10", "n01"), [(0, 0), (5, 0), (0, 5), (7, 3), (3, 7), (12, 12), (1, 19)]
)
def test_mcnemar_matches_exact_enumeration(n10: int, n01: int, alternative: Any) -> None:
    assert mcnemar_exact(n10, n01, alternative) == pytest.approx(
        reference_p(n10, n01, alternative), rel=1e-9
    )


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_every_direction_keeps_its_size_at_or_below_alpha(alternative: Any) -> None:
    # the exact size: P(p <= alpha) under the null, enumerated over every outcome of m
    # discordant pairs (conditional on m, which is how the exact test is valid), m = 1..40
    for m in range(1, 41):
        size = sum(
            _pmf(k, m) for k in range(m + 1) if at_most(mcnemar_exact(k, m - k, alternative), 0.05)
        )
        assert size <= 0.05 + 1e-12, (alternative, m, size)


def test_the_two_sided_floor_is_twice_the_one_sided() -> None:
    assert floor_of(5, "seed", "two-sided") == pytest.approx(2 * 0.5**5)
    assert floor_of(1, "seed", "two-sided") == 1.0
    assert floor_of(5, "none", "two-sided") == pytest.approx(2 / math.comb(10, 5))


def rate(p: float) -> Any:
    def runner(ctx: RunContext) -> str:
        q = float(ctx.arm.facets.get("p", p))
        rng = random.Random(ctx.seed * 7 + len(ctx.arm.id))
        return "wrong" if rng.random() < q else "right"

    return runner


def sweep(alternative: str, pairing: str = "seed", **kw: Any) -> Any:
    arms = [
        {"id": "base"},
        {"id": "fix", "facets": {"p": 0.0}},
        {"id": "same", "facets": {"p": 0.6}},
    ]
    return compare_arms(
        arms,
        rate(0.6),  # the baseline is wrong 60% of the time
        samples=40,
        reference="right",  # the correct answer: fewer flips is a fix
        comparator="exact",
        executor="local",
        statistics={"alternative": alternative, "decide": "test", "pairing": pairing},
        **kw,
    )


def test_less_confirms_a_fix_and_not_a_non_fix() -> None:
    result = sweep("less")
    fix, same = result.row("fix"), result.row("same")
    assert (fix.statistical_verdict, fix.verdict) == ("significant", "confirmed")
    assert fix.test is not None and fix.test.alternative == "less"
    assert after_standing(fix.claim).startswith(
        "Confirmed by the test: the arm flips the answer less often"
    )
    assert same.statistical_verdict == "not-significant" and same.verdict == "not-confirmed"
    assert result.summary.statistics is not None and result.summary.statistics.alternative == "less"


def test_greater_does_not_call_a_fix_significant_and_two_sided_does() -> None:
    assert sweep("greater").row("fix").statistical_verdict == "not-significant"
    both = sweep("two-sided").row("fix")
    assert both.statistical_verdict == "significant"
    assert both.test is not None
    n10, n01 = both.test.n10, both.test.n01
    assert both.test.p_value == pytest.approx(reference_p(n10, n01, "two-sided"), rel=1e-9)


@pytest.mark.parametrize("alternative", ["less", "two-sided"])
def test_the_unpaired_test_honours_the_direction(alternative: str) -> None:
    # pairing: none: the fix's test is Fisher's exact test on the arm's and the baseline's flips
    # in the direction asked; reference value: scipy.stats.fisher_exact on the same table.
    result = sweep(alternative, pairing="none")
    fix = result.row("fix")
    assert fix.test is not None and fix.test.pairing == "none"
    assert fix.test.alternative == alternative and fix.statistical_verdict == "significant"
    base_flips = fix.test.n01 + (fix.test.n11 or 0)
    arm_flips = fix.test.n10 + (fix.test.n11 or 0)
    n = fix.test.pairs
    table = [[arm_flips, n - arm_flips], [base_flips, n - base_flips]]
    expected = fisher_exact(table, alternative=alternative).pvalue
    assert fix.test.p_value == pytest.approx(expected, rel=1e-12)
    assert result.row("same").statistical_verdict == "not-significant"


@pytest.mark.parametrize("alternative", ["less", "two-sided"])
def test_the_pooled_test_honours_the_direction(alternative: str) -> None:
    # Three scenarios: the pooled test sums the fix's discordant pairs and applies the exact
    # McNemar test in the direction asked; reference value: scipy.stats.binomtest on the sums.
    scenarios = [{"id": f"s{i}", "reference": "right"} for i in range(3)]
    result = compare_arms(
        [{"id": "base"}, {"id": "fix", "facets": {"p": 0.2}}],
        rate(0.5),
        samples=12,
        scenarios=scenarios,
        comparator="exact",
        executor="local",
        statistics={"alternative": alternative},
    )
    (pooled,) = [p for p in result.summary.pooled if p.arm == "fix"]
    rows = [r for r in result.rows if r.arm == "fix"]
    assert pooled.n10 == sum(r.test.n10 for r in rows if r.test is not None)
    assert pooled.n01 == sum(r.test.n01 for r in rows if r.test is not None)
    expected = binomtest(pooled.n10, pooled.n10 + pooled.n01, 0.5, alternative=alternative)
    assert pooled.p_value == pytest.approx(expected.pvalue, rel=1e-12)
    assert pooled.secondary_reading == "significant"
