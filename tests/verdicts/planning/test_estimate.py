"""The spend and wall-time estimate ``validate --smoke`` and ``plan`` share (issue 26)."""

from __future__ import annotations

import pytest

from counterfact.records.runs import RunError, RunRecord
from counterfact.verdicts.planning.estimate import (
    PerRun,
    amount,
    estimate_sweep,
    estimate_text,
    per_run,
    spend_text,
)


def _run(seed: int, duration: float, cost: dict[str, float] | None, ok: bool) -> RunRecord:
    return RunRecord(
        scenario="q",
        arm="a",
        seed=seed,
        output="yes" if ok else None,
        manifest=None,
        error=None if ok else RunError(type="ValueError", message="no"),
        cost=cost,
        duration_s=duration,
        finished_at="2026-01-01T00:00:00+00:00",
    )


def test_per_run_streams_the_means_over_every_run_and_the_cost_over_successful_ones() -> None:
    runs = [
        _run(0, 1.0, {"usd": 0.02, "tokens": 10.0}, True),
        _run(1, 3.0, {"usd": 0.04}, True),
        _run(2, 5.0, {"usd": 9.0, "retries": 2.0}, False),  # a failed run's cost is left out
        _run(3, 7.0, None, True),
    ]
    # by hand: time over all four (1+3+5+7)/4 = 4; cost over the three successful runs, a key
    # a run did not report counting 0: usd (0.02+0.04)/3, tokens 10/3; 'retries' only failed
    got = per_run(iter(runs))  # one pass over an iterator: the plan streams runs.jsonl
    assert got.count == 4 and got.run_s == pytest.approx(4.0)
    assert got.cost == pytest.approx({"tokens": 10 / 3, "usd": 0.02})
    assert list(got.cost) == ["tokens", "usd"]
    # none succeeded: the cost per run over every run
    failed = per_run([_run(0, 2.0, {"usd": 1.0}, False), _run(1, 4.0, None, False)])
    assert failed.cost == pytest.approx({"usd": 0.5}) and failed.run_s == pytest.approx(3.0)
    assert per_run([]) == PerRun(0, 0.0, {})


def test_money_prints_to_the_cent_and_tokens_as_whole_numbers() -> None:
    assert amount("usd", 0.45) == "0.45"  # plan used to print "usd ~0"
    assert amount("usd", 1234.5) == "1,234.50"
    assert amount("usd", 0.0034567) == "0.003457"  # below a cent: 4 significant digits
    assert amount("prompt_tokens", 1234567.4) == "1,234,567"
    assert amount("loops", 3.25) == "3.25" and amount("loops", 1500.2) == "1,500"
    assert spend_text({"usd": 0.45, "tokens": 12345.0}) == "usd 0.45, tokens 12,345"
    assert spend_text({}) == "no cost reported"


def test_the_issue_s_sweep_runs_at_the_achieved_pace_not_the_configured() -> None:
    # 600 runs of 10 s: at the configured 32 in flight 187.5 s; at the 11.7 achieved 512.8 s
    unit = PerRun(40, 10.0, {"usd": 0.01})
    achieved = estimate_sweep(600, unit, 11.7, None, source="the pilot achieved")
    assert achieved.runs_s == pytest.approx(600 * 10 / 11.7)
    # a rate limit of 30 a minute holds it to 600 / 0.5 = 1200 s
    limited = estimate_sweep(600, unit, 11.7, 30.0, judging_s=40.0, startup_s=2.0)
    assert limited.rate_bound and limited.runs_s == pytest.approx(1200.0)
    assert limited.wall_s == pytest.approx(1242.0)
    text = estimate_text(limited)
    assert text.startswith("600 runs: usd 6.00; wall time ~20.7 min = runs ~20.0 min")
    assert "rate limit 30/min sets the pace" in text and "judging and report ~40.0 s" in text
    assert "judging and report not included" in estimate_text(achieved)
