"""``statistics.decide: test`` (issue 19 item 1): the adjusted test decides the headline, the
tier is recorded beside it, the not-applied gates still decide first.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from counterfact import RunContext, RunResult, compare_arms
from counterfact.records.parts import EffectRecord
from counterfact.records.summary import StatisticsRecord
from counterfact.verdicts.decide import headline
from counterfact.verdicts.stats.settings import DEFAULT_STATISTICS

from ..helpers import after_standing

ARMS: list[dict[str, Any]] = [
    {"id": "base"},
    {"id": "strong", "facets": {"p": 0.9}},
    {"id": "null", "facets": {"p": 0.1}},
]


def noisy(ctx: RunContext) -> RunResult:
    """Seeded: wrong with probability facets.p (0.1 for the baseline), independently per arm."""
    p = float(ctx.arm.facets.get("p", 0.1))
    salt = {"base": 0, "strong": 1, "null": 2, "ghost": 3}[ctx.arm.id]
    rng = random.Random(ctx.seed * 10 + salt)
    manifest = {"p": 0.1} if ctx.arm.id == "ghost" else dict(ctx.arm.facets)
    return RunResult(output="wrong" if rng.random() < p else "right", manifest=manifest)


def sweep(samples: int, arms: list[dict[str, Any]] = ARMS, **stats: Any) -> Any:
    return compare_arms(
        arms,
        noisy,
        samples=samples,
        reference="right",
        comparator="exact",
        executor="local",
        statistics={"decide": "test", **stats},
    )


def test_the_test_confirms_a_strong_arm_over_a_noisy_baseline_and_records_the_tier() -> None:
    strong = sweep(40).row("strong")
    assert (strong.verdict, strong.reason, strong.decided_by) == (
        "confirmed",
        "test-significant",
        "test",
    )
    assert (strong.tier_verdict, strong.tier_reason) == ("inconclusive", "unstable-baseline")
    assert after_standing(strong.claim).startswith("Confirmed by the test")
    assert "The seed tiers alone would say inconclusive (unstable-baseline)" in strong.claim


def test_under_tiers_the_row_is_todays_and_records_the_same_tier() -> None:
    row = sweep(40, decide="tiers").row("strong")
    assert (row.verdict, row.reason, row.decided_by) == (
        "inconclusive",
        "unstable-baseline",
        "tiers",
    )
    assert (row.tier_verdict, row.tier_reason) == (row.verdict, row.reason)


def test_a_declared_minimal_effect_is_ruled_out_or_not() -> None:
    # the null arm flips as often as the baseline: at 200 seeds the 95% interval of the
    # difference is about +-0.07 wide, which rules out 0.3 but not 0.02
    wide = sweep(200, min_effect=0.3).row("null")
    assert (wide.verdict, wide.reason) == ("not-confirmed", "test-rules-out-effect")
    assert wide.effect is not None and wide.effect.high < 0.3
    narrow = sweep(200, min_effect=0.02).row("null")
    assert (narrow.verdict, narrow.reason) == ("inconclusive", "test-inconclusive")


def test_too_few_samples_is_inconclusive_by_the_test() -> None:
    row = sweep(3).row("strong")  # 3 pairs: the smallest p is 1/8, above 0.05
    assert (row.verdict, row.reason) == ("inconclusive", "test-underpowered")


def test_the_not_applied_gate_decides_first() -> None:
    ghost = sweep(40, arms=[*ARMS, {"id": "ghost", "facets": {"p": 0.8}}]).row("ghost")
    assert (ghost.verdict, ghost.reason, ghost.decided_by) == (
        "inconclusive",
        "arm-not-applied",
        "tiers",
    )
    assert ghost.test is None  # no p-value for an arm that did not take effect


@pytest.mark.parametrize(
    ("statistical", "high", "min_effect", "expected"),
    [
        ("significant", 0.9, None, ("confirmed", "test-significant")),
        ("underpowered", 0.9, 0.3, ("inconclusive", "test-underpowered")),
        ("not-significant", 0.9, None, ("not-confirmed", "test-not-significant")),
        ("not-significant", 0.2, 0.3, ("not-confirmed", "test-rules-out-effect")),
        ("not-significant", 0.4, 0.3, ("inconclusive", "test-inconclusive")),
    ],
)
def test_the_headline_table(
    statistical: Any, high: float, min_effect: float | None, expected: tuple[str, str]
) -> None:
    effect = EffectRecord(diff=0.0, low=-0.1, high=high, level=0.95)
    settings = StatisticsRecord.model_validate(
        DEFAULT_STATISTICS.model_dump() | {"decide": "test", "min_effect": min_effect}
    )
    got = headline(("inconclusive", "unstable-baseline"), statistical, effect, settings)
    assert (got.verdict, got.reason) == expected
    gate = headline(("inconclusive", "arm-not-applied"), statistical, effect, settings)
    assert (gate.verdict, gate.reason, gate.decided_by) == (
        "inconclusive",
        "arm-not-applied",
        "tiers",
    )


def test_not_confirmed_claims_carry_the_interval_and_the_tier_when_they_differ() -> None:
    # 40 seeds: the null arm's test is not significant; without min_effect the claim gives the
    # interval and says an effect inside it is not ruled out; with one it names the effect
    # ruled out. The tiers (an unstable baseline) would say inconclusive, and the claim says so.
    null = sweep(40).row("null")
    assert (null.verdict, null.reason) == ("not-confirmed", "test-not-significant")
    assert null.effect is not None
    interval = f"[{null.effect.low:+.2f}, {null.effect.high:+.2f}]"
    claim = after_standing(null.claim)
    assert claim.startswith("Not confirmed by the test: no significant difference")
    assert interval in claim and "is not ruled out" in claim
    assert null.tier_verdict != null.verdict
    assert f"The seed tiers alone would say {null.tier_verdict} ({null.tier_reason})" in claim
    ruled = sweep(200, min_effect=0.3).row("null")
    assert "which rules out the declared minimal effect 0.3" in ruled.claim
