"""The pooled test is shown where people look (issue 19 item 5, the stdout part): after the
per-scenario table, one line per challenger."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from counterfact import RunContext, compare_arms
from counterfact.orchestrator.drivers.outputs.report import write_report


def run(ctx: RunContext) -> str:
    """Seeded: the arm is wrong half the time, the baseline a fifth."""
    rng = random.Random(ctx.seed * 31 + int(ctx.scenario.id[1:]) * 7 + len(ctx.arm.id))
    return "no" if rng.random() < (0.5 if ctx.arm.facets else 0.2) else "yes"


def test_the_table_ends_with_each_challengers_pooled_test() -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        run,
        samples=12,
        scenarios=[{"id": f"s{i}", "reference": "yes"} for i in range(6)],
        comparator="exact",
        executor="local",
    )
    (pooled,) = result.summary.pooled
    lines = result.table().splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("pooled across scenarios (secondary"))
    assert lines[at + 1].startswith(f"  alt: {pooled.secondary_reading} — McNemar stratified")
    assert f"p = {pooled.p_value:.3g}" in lines[at + 1]
    assert f"{pooled.n10} vs {pooled.n01} discordant of {pooled.pairs} pairs" in lines[at + 1]


def test_one_scenario_has_no_pooled_line() -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        run,
        samples=6,
        scenarios=[{"id": "s0", "reference": "yes"}],
        comparator="exact",
        executor="local",
    )
    assert "pooled across scenarios" not in result.table()


def _breaks_s5(out: Path | None = None) -> Any:
    """The arm breaks scenario s5 only (every seed), and changes nothing on s0..s4."""

    def runner(ctx: RunContext) -> str:
        broken = ctx.arm.facets and ctx.scenario.id == "s5"
        return "no" if broken or random.Random(ctx.seed).random() < 0.1 else "yes"

    return compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        runner,
        samples=30,
        scenarios=[{"id": f"s{i}", "reference": "yes"} for i in range(6)],
        comparator="exact",
        executor="local",
        out=out,
    )


def test_the_pooled_effect_is_printed_and_heterogeneity_is_flagged() -> None:
    result = _breaks_s5()
    (pooled,) = result.summary.pooled
    effect = pooled.effect
    assert effect is not None
    assert effect.diff == pytest.approx((pooled.n10 - pooled.n01) / pooled.pairs)
    assert effect.low < effect.diff < effect.high
    assert effect.heterogeneous and effect.disagreeing == ["s5"]
    table = result.table()
    assert f"pooled effect {effect.diff:+.2f}" in table
    assert "the scenarios' effects disagree" in table and "s5 stand out" in table


def test_the_report_flags_heterogeneity_and_names_the_scenario(tmp_path: Path) -> None:
    _breaks_s5(tmp_path / "o")
    text = write_report(tmp_path / "o").read_text(encoding="utf-8")
    pooled = text[text.index("<h2>Pooled across scenarios</h2>") : text.index("<h2>Verdicts</h2>")]
    assert "effects disagree (p = " in pooled and "s5 stand out" in pooled
