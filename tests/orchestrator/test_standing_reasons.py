"""Each kind of doubt on a verdict row names itself with the seeds that witness it (issue 20 item
1): failed runs, rate-limited runs, runs from another sweep's cache, escaped text, a sequential arm
at its cap, and seeds a stopped sweep never recorded (a floor: "at least")."""

from __future__ import annotations

from pathlib import Path

import pytest

from counterfact import RunContext, RunResult, compare_arms
from counterfact.exceptions import BudgetExhausted
from counterfact.orchestrator.storage.recordfiles import read_verdicts
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


def test_rate_limited_runs_are_named_with_their_seeds(tmp_path: Path) -> None:
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
    limited = reasons_of(result.row("alt"))["runs-rate-limited"]
    assert (limited.count, limited.seeds) == (8, [0, 1, 2, 3])  # each run once, both arms
    assert limited.detail.startswith("4 of the arm's runs and 4 of the baseline's")


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
    (big,) = [r for r in read_verdicts(tmp_path / "o") if r.arm == "big"]
    reasons = reasons_of(big)
    missing = reasons["runs-missing"]
    assert missing.at_least and missing.count >= 2 and missing.seeds
    assert big.standing == "not-sure"
    assert f"runs-missing (at least {missing.count})" in big.claim
