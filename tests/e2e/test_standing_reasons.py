"""Each kind of doubt on a verdict row names itself with the seeds that witness it (issue 20 item
1): failed runs, runs from another sweep's cache, escaped text, a sequential arm at its cap, and
seeds a stopped sweep never recorded (a floor: "at least"). A run that waited on a rate limit and
then ran is no doubt (issue 26 item 7): it is counted in the summary instead."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from counterfact import RateLimited, RunContext, RunResult, compare_arms
from counterfact.exceptions import BudgetExhausted
from counterfact.orchestrator.storage.recordfiles import verdicts_of
from counterfact.records.parts import DoubtRecord

TESTS = Path(__file__).resolve().parent.parent
ARMS = [{"id": "base", "facets": {"model": "small"}}, {"id": "big", "facets": {"model": "large"}}]
KW = {"samples": 8, "reference": "yes", "comparator": "contains", "executor": "local"}


def answer(ctx: RunContext) -> RunResult:
    """The large model answers 'no'; both report their facets."""
    out = "no" if ctx.arm.facets["model"] == "large" else "yes"
    return RunResult(output=out, manifest={"model": ctx.arm.facets["model"]})


def reasons_of(row: object) -> dict[str, DoubtRecord]:
    return {r.code: r for r in row.reasons}  # type: ignore[attr-defined]


def test_failed_runs_are_named_with_their_seeds() -> None:
    def runner(ctx: RunContext) -> RunResult:
        if ctx.arm.id == "big" and ctx.seed in (1, 4):
            raise ValueError("broken")
        return answer(ctx)

    big = compare_arms(ARMS, runner, **KW).row("big")
    failed = reasons_of(big)["runs-failed"]
    assert (failed.count, failed.seeds, failed.at_least) == (2, [1, 4], False)
    assert failed.detail.startswith("2 of the arm's runs and 0 of the baseline's failed")
    assert big.standing == "not-sure" and "runs-failed (2)" in big.claim


def test_escaped_text_is_named_with_its_seed() -> None:
    def runner(ctx: RunContext) -> RunResult:
        out = answer(ctx)
        if ctx.arm.id == "big" and ctx.seed == 6:
            return RunResult(output="no \ud800", manifest=out.manifest)  # a lone surrogate
        return out

    escaped = reasons_of(compare_arms(ARMS, runner, **KW).row("big"))["text-escaped"]
    assert (escaped.count, escaped.seeds) == (1, [6])
    assert "escaped form" in escaped.detail


def test_a_run_that_waited_on_a_rate_limit_and_then_ran_is_no_doubt(tmp_path: Path) -> None:
    # Every run is refused once (a 429) and then answers: the wait changes when it ran, not what
    # it answered, so the row stays sure, and summary.json counts the runs that waited.
    refused: set[tuple[str, int]] = set()

    def runner(ctx: RunContext) -> RunResult:
        if (ctx.arm.id, ctx.seed) not in refused:
            refused.add((ctx.arm.id, ctx.seed))
            raise RateLimited("slow down", retry_after=0.01)
        return answer(ctx)

    result = compare_arms(ARMS, runner, out=tmp_path / "o", **KW)
    big = result.row("big")
    assert (big.verdict, big.standing, big.reasons) == ("confirmed", "sure", [])
    assert big.claim.startswith("Sure: ")
    assert (
        result.summary.execution.runs_rate_limited == 16
        and result.summary.execution.runs_failed == 0
    )
    written = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert written["execution"]["runs_rate_limited"] == 16


def test_rate_limited_runs_are_counted_when_they_overlap(tmp_path: Path) -> None:
    # The async path (a throttle): the count sits beside the concurrency record's refusals.
    marks = tmp_path / "marks"
    marks.mkdir()
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        "io_runners.py:refuses_first",
        base_dir=TESTS,
        samples=4,
        scenarios=[{"id": "q", "inputs": {"marks": str(marks)}, "reference": "yes"}],
        executor="local",
    )
    assert "runs-rate-limited" not in reasons_of(result.row("alt"))
    assert result.summary.execution.runs_rate_limited == 8  # each run once, both arms
    assert (
        result.summary.execution.concurrency is not None
        and result.summary.execution.concurrency.refusals == 8
    )


def test_runs_from_another_sweep_s_cache_are_named(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    compare_arms(ARMS, answer, runner_version="c", cache_dir=cache, out=tmp_path / "a", **KW)
    again = compare_arms(
        ARMS, answer, runner_version="c", cache_dir=cache, out=tmp_path / "b", **KW
    ).row("big")
    cached = reasons_of(again)["runs-from-cache"]
    assert (cached.count, cached.seeds) == (16, list(range(8)))
    assert again.standing == "not-sure"


def test_a_sequential_arm_at_its_cap_is_a_reason() -> None:
    # The arm flips on even seeds, the baseline never: after 12 seeds the e-value for 6 of 6
    # discordant pairs is (2^7 - 1) / 7 = 18.1 < 20 (the threshold for one test), and at 8 seeds
    # 20 was still within reach, so the arm stops at the cap undecided.
    def runner(ctx: RunContext) -> RunResult:
        out = "no" if ctx.arm.id == "big" and ctx.seed % 2 == 0 else "yes"
        return RunResult(output=out, manifest={"model": ctx.arm.facets["model"]})

    kw = KW | {"samples": 4}
    big = compare_arms(ARMS, runner, sequential={"max_samples": 12, "wave": 4}, **kw).row("big")
    assert big.sequential is not None and big.sequential.stopped_for == "max-samples"
    cap = reasons_of(big)["sequential-cap"]
    assert cap.count == 12 and "reached its cap (12 seeds)" in cap.detail


def test_seeds_a_stopped_sweep_never_recorded_are_at_least(tmp_path: Path) -> None:
    # A budget for 10 runs of 16: the verdicts judge the runs that fit, and the seeds without a
    # record are counted as a floor.
    def runner(ctx: RunContext) -> RunResult:
        out = answer(ctx)
        return RunResult(output=out.output, manifest=out.manifest, cost={"usd": 0.01})

    with pytest.raises(BudgetExhausted):
        compare_arms(ARMS, runner, budget={"usd": 0.1}, out=tmp_path / "o", **KW)
    (big,) = [r for r in verdicts_of(tmp_path / "o") if r.arm == "big"]
    reasons = reasons_of(big)
    missing = reasons["runs-missing"]
    assert missing.at_least and missing.count >= 2 and missing.seeds
    assert big.standing == "not-sure"
    assert f"runs-missing (at least {missing.count})" in big.claim
