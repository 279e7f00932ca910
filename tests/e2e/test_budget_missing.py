"""A budget-stopped sweep reports the seeds it never ran as missing, not failed (issue 27 item 5):
``missing_seeds`` holds them, the row's reason is ``runs-missing`` when no run failed, and no
claim sends the reader to errors ``runs.jsonl`` does not hold; a row with both names both."""

from __future__ import annotations

from pathlib import Path

import pytest

from counterfact import RunContext, RunResult, compare_arms
from counterfact.exceptions import BudgetExhausted
from counterfact.orchestrator.storage.recordfiles import verdicts_of
from counterfact.records.verdicts import VerdictRecord

ARMS = [{"id": "base", "facets": {"model": "small"}}, {"id": "big", "facets": {"model": "large"}}]
KW = {"samples": 8, "reference": "yes", "comparator": "contains", "executor": "local"}


def _priced(ctx: RunContext) -> RunResult:
    """Every run answers 'yes' at 0.01 usd."""
    return RunResult(output="yes", manifest={"model": ctx.arm.facets["model"]}, cost={"usd": 0.01})


def _stopped(tmp_path: Path, runner: object) -> dict[str, VerdictRecord]:
    # a budget for 10 runs of 16: the in-process executor runs one at a time, so it stops there
    with pytest.raises(BudgetExhausted):
        compare_arms(ARMS, runner, budget={"usd": 0.1}, out=tmp_path / "o", **KW)
    return {r.arm: r for r in verdicts_of(tmp_path / "o")}


def test_seeds_the_budget_never_ran_are_missing_not_failed(tmp_path: Path) -> None:
    rows = _stopped(tmp_path, _priced)
    big, base = rows["big"], rows["base"]
    missing = [s for s in range(8) if s not in big.seed_list()]
    assert missing  # the budget stopped before every seed ran
    assert big.failed_seed_list() == [] and base.failed_seed_list() == []
    assert big.missing_seed_list() == missing
    assert big.reason == "runs-missing" and big.verdict == "inconclusive"
    assert f"{len(missing)} of 8 seeds were not run" in big.claim
    assert "the budget stopped scheduling" in big.claim and "raise budget" in big.claim
    for row in rows.values():
        assert "errors in runs.jsonl" not in row.claim and "runs-failed" not in row.claim


def test_a_row_with_failed_and_unrun_seeds_names_both(tmp_path: Path) -> None:
    def runner(ctx: RunContext) -> RunResult:
        if ctx.arm.id == "big" and ctx.seed == 1:
            raise ValueError("broken")
        return _priced(ctx)

    big = _stopped(tmp_path, runner)["big"]
    assert big.failed_seed_list() == [1]
    unrun = big.missing_seed_list()
    assert unrun and 1 not in unrun
    assert big.reason == "runs-failed"
    assert "1 failed" in big.claim and f"{len(unrun)} of 8 seeds were not run" in big.claim
