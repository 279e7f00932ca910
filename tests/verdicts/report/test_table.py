from __future__ import annotations

from counterfact.probes.arms import ArmSpec
from counterfact.probes.comparators import ExactComparator
from counterfact.probes.similarity import TextSimilarity
from counterfact.records.runs import RunRecord
from counterfact.verdicts.assess import assess_scenario
from counterfact.verdicts.report.table import render_table
from counterfact.verdicts.stats.settings import DEFAULT_STATISTICS

from ...helpers import run_record


def _runs(arm: str, output: str) -> list[RunRecord]:
    return [
        RunRecord(
            scenario="s",
            arm=arm,
            seed=s,
            output=output,
            manifest=None,
            cost=None,
            error=None,
            duration_s=0.0,
            finished_at="t",
        )
        for s in range(2)
    ]


def test_table_has_one_row_per_arm_with_verdict_flips_and_reason() -> None:
    arms = (ArmSpec("base", {}), ArmSpec("alt", {"x": 1}))
    got = assess_scenario(
        "s",
        "yes",
        arms,
        "base",
        _runs("base", "yes") + _runs("alt", "no"),
        2,
        ExactComparator(),
        TextSimilarity(),
    )
    lines = render_table(got.verdicts).splitlines()
    assert lines[0].split() == ["arm", "verdict", "flips", "mean", "sim", "reason", "standing"]
    assert lines[2].split() == ["base", "baseline", "0/2", "1.000", "stable"]
    # Exact match is text-level, and the test at 2 samples cannot reach alpha: two reasons.
    assert lines[3].split() == [
        "alt",
        "confirmed",
        "2/2",
        "0.000",
        "majority-flip",
        "not-sure",
        "(2)",
    ]


def test_empty_table() -> None:
    assert render_table([]) == "(no verdicts)"


def test_the_test_column_shows_once_the_family_is_judged() -> None:
    from counterfact.verdicts.rows import verdict_rows

    arms = (ArmSpec("base", {}), ArmSpec("alt", {"x": 1}))
    got = assess_scenario(
        "s",
        "yes",
        arms,
        "base",
        _runs("base", "yes") + _runs("alt", "no"),
        2,
        ExactComparator(),
        TextSimilarity(),
    )
    lines = render_table(verdict_rows(got.judgements, DEFAULT_STATISTICS)).splitlines()
    assert lines[0].split() == [
        "arm",
        "verdict",
        "flips",
        "mean",
        "sim",
        "reason",
        "test",
        "standing",
    ]
    # 2 pairs: the smallest attainable p is 0.25 > 0.05, whatever the outcome
    cells = lines[3].split()
    assert cells[:6] == ["alt", "confirmed", "2/2", "0.000", "majority-flip", "underpowered"]
    # no manifest reported, text-level comparator, underpowered test, tier and test at odds
    assert cells[6:] == ["not-sure", "(4)"]


def test_table_tells_failed_runs_from_seeds_never_run() -> None:
    arms = (ArmSpec("base", {}), ArmSpec("alt", {"x": 1}))
    base = _runs("base", "yes")[:1]  # seed 1 never ran
    alt = [*_runs("alt", "yes")[:1], run_record(1, "alt", error=("ValueError", "broken"))]
    got = assess_scenario(
        "s", "yes", arms, "base", base + alt, 2, ExactComparator(), TextSimilarity()
    )
    base_line, alt_line = render_table(got.verdicts).splitlines()[2:4]
    assert "(1 not run)" in base_line and "runs-missing" in base_line
    assert "(1 failed)" in alt_line and "runs-failed" in alt_line
