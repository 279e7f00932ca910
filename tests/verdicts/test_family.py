"""The family step: adjustment over the declared family, the words, the pooled test (15, 18)."""

from __future__ import annotations

import pytest

from counterfact import RunContext, compare_arms

SCENARIOS = [{"id": f"q{i}", "inputs": {}, "reference": "yes"} for i in range(2)]


def runner(ctx: RunContext) -> str:
    # alt flips on seeds 0-5 of q0 and 0-2 of q1; alt2 never flips
    limit = {"q0": 6, "q1": 3}[ctx.scenario.id]
    return "no" if ctx.arm.id == "alt" and ctx.seed < limit else "yes"


def sweep(**statistics: object) -> object:
    return compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"m": 1}}, {"id": "alt2", "facets": {"m": 2}}],
        runner,
        samples=8,
        scenarios=SCENARIOS,
        comparator="exact",
        executor="local",
        **({"statistics": statistics} if statistics else {}),  # type: ignore[arg-type]
    )


def test_holm_over_the_sweep_family_and_the_pooled_test() -> None:
    result = sweep()
    q0, q1 = result.row("alt", "q0"), result.row("alt", "q1")  # type: ignore[attr-defined]
    # q0: 6 of 6 discordant, p = 1/64; q1: 3 of 3, p = 1/8; alt2: p = 1 twice. Holm over 4:
    # sorted 1/64 * 4 = 0.0625, 1/8 * 3 = 0.375, then 1 and 1.
    assert q0.test.p_value == pytest.approx(1 / 64) and q0.test.p_adjusted == pytest.approx(0.0625)
    assert q1.test.p_adjusted == pytest.approx(0.375)
    assert q0.test.adjustment.family_size == 4 and q0.statistical_verdict == "not-significant"
    (pooled_alt, pooled_alt2) = result.summary.pooled  # type: ignore[attr-defined]
    # pooled alt: 9 of 9 discordant, p = 1/512; Holm over the two challengers: 2/512.
    assert (pooled_alt.arm, pooled_alt.n10, pooled_alt.n01) == ("alt", 9, 0)
    assert pooled_alt.p_value == pytest.approx(1 / 512)
    assert pooled_alt.p_adjusted == pytest.approx(2 / 512)
    assert pooled_alt.secondary_reading == "significant" and pooled_alt2.p_value == 1.0
    assert result.summary.statistics.adjust == "holm"  # type: ignore[attr-defined]


def test_no_adjustment_and_the_scenario_family() -> None:
    none = sweep(adjust="none").row("alt", "q0")  # type: ignore[attr-defined]
    assert none.test.p_adjusted == none.test.p_value and none.statistical_verdict == "significant"
    per = sweep(family="scenario").row("alt", "q0")  # type: ignore[attr-defined]
    assert per.test.adjustment.family_size == 2 and per.test.p_adjusted == pytest.approx(2 / 64)


def test_underpowered_says_how_many_samples_would_do() -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"m": 1}}],
        lambda ctx: "no" if ctx.arm.id == "alt" else "yes",
        samples=3,
        reference="yes",
        comparator="exact",
        executor="local",
    )
    alt = result.row("alt")
    assert (alt.verdict, alt.statistical_verdict) == ("confirmed", "underpowered")
    assert (
        "underpowered — at 3 paired samples no outcome can reach p ≤ 0.05; 5 samples can"
        in alt.claim
    )
