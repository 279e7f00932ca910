"""The spend budget on its own: reservations for runs in flight, and the feed closing at it."""

from __future__ import annotations

from counterfact.orchestrator.engine.executors.feed import RunFeed
from counterfact.orchestrator.engine.pacing.budget import Budget
from counterfact.probes.runner import ArmView, RunContext, ScenarioView
from counterfact.records.runs import RunRecord

from ....helpers import run_record


def _record(seed: int, usd: float | None, *, cached: bool = False) -> RunRecord:
    return run_record(seed, cost=None if usd is None else {"usd": usd}, from_cache=cached)


def _contexts(n: int) -> list[RunContext]:
    return [RunContext(ScenarioView("s", {}), ArmView("a", {}), seed) for seed in range(n)]


def test_nothing_binds_before_a_run_cost_something() -> None:
    budget = Budget({"usd": 1.0})
    assert budget.room() is None
    budget.observe(_record(0, None))
    assert budget.room() is None


def test_runs_in_flight_are_reserved_at_the_mean_cost() -> None:
    budget = Budget({"usd": 1.0})
    for seed in range(4):
        budget.observe(_record(seed, 0.1))  # 0.4 spent, mean 0.1
    assert budget.room() == 6
    budget.started(5)
    assert budget.room() == 1  # 0.4 + 5 x 0.1 reserved: one more fits
    budget.started(1)
    assert budget.room() == 0 and budget.exhausted == ["usd"]


def test_cached_records_cost_nothing_this_time() -> None:
    budget = Budget({"usd": 0.5})
    budget.observe(_record(0, 0.25))
    budget.observe(_record(1, 9.0, cached=True))
    assert budget.spent == {"usd": 0.25} and budget.room() == 1


def test_a_runs_limit_counts_model_calls_not_a_cost_key() -> None:
    budget = Budget({"runs": 10.0})
    budget.observe(_record(0, None))  # no cost reported: still one model call
    budget.observe(_record(1, 5.0).model_copy(update={"attempts": 3}))  # retried twice
    budget.observe(_record(2, None, cached=True))  # sent nothing this time
    assert budget.spent == {"runs": 4.0}
    assert budget.room() == 3  # (10 - 4) / 2 calls a run on average
    budget.started(3)
    assert budget.room() == 0 and budget.exhausted == ["runs"]


def test_the_tightest_of_several_limits_decides() -> None:
    budget = Budget({"usd": 10.0, "tokens": 300.0})
    rec = _record(0, 1.0).model_copy(update={"cost": {"usd": 1.0, "tokens": 100.0}})
    budget.observe(rec)
    assert budget.room() == 2 and budget.exhausted == []


def test_the_feed_hands_out_only_what_fits_then_closes() -> None:
    budget = Budget({"usd": 0.3})
    budget.observe(_record(99, 0.1))
    feed = RunFeed(_contexts(10))
    feed.budget = budget
    assert len(feed.take(5)) == 2  # 0.1 spent + 2 in flight x 0.1 = 0.3
    assert feed.take(5) == [] and feed.closed
    assert budget.not_started == 8 and budget.exhausted == ["usd"]


def test_a_negative_or_non_finite_recorded_cost_never_lowers_the_spend() -> None:
    # a runs.jsonl written by hand or by an older version may hold what runners may not return
    budget = Budget({"usd": 10.0})
    budget.observe(_record(0, 4.0))
    for seed, usd in enumerate([-20.0, float("nan"), float("-inf")], start=1):
        budget.observe(_record(seed, usd))
    assert budget.spent == {"usd": 4.0} and budget.reported == {"usd": 1}
    # an infinite (or 1e308) spend is refused on reading, as every total refuses it: it once
    # stopped every resume of its directory at once (issue 45 item 3)
    budget.observe(_record(9, float("inf")))
    budget.observe(_record(10, 1e308))
    assert budget.spent == {"usd": 4.0} and budget.room() == 1 and budget.exhausted == []
