"""A regex comparator's timeout on one output fails that comparison, not the sweep (issue 27).

The output whose search outlasts the deadline is left unscored, as a failed run is, and the row
is ``not-sure`` with the seeds that timed out; every other output of the sweep is judged.
"""

from __future__ import annotations

import pytest

from counterfact import ScoringError, compare_arms
from counterfact.probes.runner import RunContext

HOSTILE = "a" * 36 + "!"
"""Backtracks 2^36 times under ``(a|a)+$``: the search outlasts the deadline."""
SLOW_SEEDS = {2, 5}


def runner(ctx: RunContext) -> str:
    if ctx.arm.id == "alt" and ctx.seed in SLOW_SEEDS:
        return HOSTILE
    return "b" if ctx.arm.id == "alt" and ctx.seed % 2 else "aaa"


def test_a_timed_out_output_is_an_unscored_seed_with_a_doubt() -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        runner,
        samples=8,
        reference="aaa",
        comparator={"kind": "regex", "pattern": "(a|a)+$"},
        executor="local",
    )
    row = result.row("alt")
    assert row.verdict == "inconclusive"  # fewer seeds judged than declared
    assert row.reason == "runs-failed" and row.failed_seeds == sorted(SLOW_SEEDS)
    assert "2 of 8 seeds ran but their output could not be compared" in row.claim
    assert "runs.jsonl" not in row.claim and "not run" not in row.claim
    assert row.seeds == [0, 1, 3, 4, 6, 7] and row.flipped_seeds == [1, 3, 7]
    assert result.row("base").seeds == list(range(8))
    doubt = next(d for d in row.reasons if d.code == "comparison-timed-out")
    assert doubt.count == 2 and doubt.seeds == sorted(SLOW_SEEDS)
    assert "regex" in doubt.detail and "comparator.pattern" in doubt.detail
    assert row.standing == "not-sure"


def test_a_timed_out_reference_still_ends_judging() -> None:
    # the reference is the baseline's seed-0 output (a declared one is checked by validate)
    def seed0_hostile(ctx: RunContext) -> str:
        return HOSTILE if ctx.seed == 0 and ctx.arm.id == "base" else "aaa"

    with pytest.raises(ScoringError, match=r"took more than .* reference") as caught:
        compare_arms(
            [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
            seed0_hostile,
            samples=3,
            comparator={"kind": "regex", "pattern": "(a|a)+$"},
            executor="local",
        )
    assert type(caught.value) is ScoringError


def test_scoring_a_probe_leaves_a_timed_out_output_out_of_its_samples() -> None:
    # the culprit search's scoring (score_runs), as the sweep's tally does per seed
    from counterfact.probes.comparators import RegexComparator
    from counterfact.probes.regex_search import compile_pattern
    from counterfact.probes.scoring import score_runs
    from counterfact.probes.similarity import TextSimilarity
    from counterfact.records.runs import RunRecord

    outputs = ["x aaa", HOSTILE, "x b"]
    fields = {"scenario": "s", "arm": "a", "manifest": None, "cost": None, "error": None}
    runs = [
        RunRecord(seed=seed, output=output, duration_s=0.0, finished_at="t", **fields)
        for seed, output in enumerate(outputs)
    ]
    comparator = RegexComparator(compile_pattern("(a|a)+$"))
    stats = score_runs(runs, "aaa", comparator, TextSimilarity())
    assert stats.seeds == (0, 2) and stats.flipped_seeds == (2,) and len(stats.similarities) == 2
