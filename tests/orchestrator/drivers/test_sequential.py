"""Sequential sweeps end to end (rule 19): waves, stopping, cancellation, resume."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from counterfact import compare_arms
from counterfact.exceptions import ResumeConflictError, SweepInterrupted
from counterfact.orchestrator.config.loading import validate_config
from counterfact.orchestrator.config.resolve import resolve_sweep
from counterfact.orchestrator.drivers.sweep import SweepResult, run_sweep
from counterfact.orchestrator.engine.calling.worker import NO_RETRY, execute_run
from counterfact.orchestrator.engine.executors.feed import RunFeed, as_feed
from counterfact.orchestrator.engine.executors.local import LocalExecutor
from counterfact.orchestrator.engine.loading.loader import RunnerRef, resolve_runner
from counterfact.probes.runner import RunContext
from counterfact.records import VERDICT_SCHEMA_VERSION
from counterfact.records.runs import RunRecord

from ...conftest import TESTS, scripted

ARMS = [
    {"id": "base", "facets": {"rate": 0.05}},
    {"id": "strong", "facets": {"rate": 0.9}},
    {"id": "same", "facets": {"rate": 0.05, "v": 2}},
    {"id": "mid", "facets": {"rate": 0.5}},
]


def _config(max_samples: int = 60, **extra: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "name": "seq",
        "runner": "runners.py:flip_rate",
        "runner_version": "v1",
        "samples": 4,
        "reference": "A",
        "comparator": {"kind": "exact"},
        "executor": {"kind": "local"},
        "arms": ARMS,
        "sequential": {"max_samples": max_samples, "wave": 4},
        **extra,
    }
    return {k: v for k, v in config.items() if v is not None}


def _sweep(out: Path | None, executor: LocalExecutor | None = None, **extra: Any) -> SweepResult:
    sweep = resolve_sweep(validate_config(_config(**extra)), base_dir=TESTS)
    return run_sweep(sweep, run_dir=out, executor=executor)


def _stops(result: SweepResult) -> dict[str, tuple[str, int]]:
    return {
        r.arm: (r.sequential.stopped_for, r.sequential.seeds_used)
        for r in result.rows
        if r.sequential is not None
    }


def _keys(out: Path) -> list[tuple[str, str, int]]:
    lines = (out / "runs.jsonl").read_text().splitlines()
    return [(d["scenario"], d["arm"], d["seed"]) for d in map(json.loads, lines)]


def test_constant_flipper_stops_exactly_at_the_threshold() -> None:
    # The arm flips on every seed, the baseline never, reference declared (no seed-0 exclusion):
    # one challenger under Holm, threshold 1/0.05 = 20; e(6,0) = 18.1 < 20 <= e(7,0) = 31.9.
    runner = scripted({"base": "A", "alt": "B"})
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        runner,
        samples=2,
        reference="A",
        comparator="exact",
        executor="local",
        sequential={"max_samples": 50, "wave": 1},
    )
    row = result.row("alt")
    assert row.sequential is not None
    assert (row.sequential.stopped_for, row.sequential.seeds_used) == ("significant", 7)
    assert row.samples == 7 and row.samples_declared == 7
    assert row.sequential.e_value == pytest.approx(31.875)
    assert row.statistical_verdict == "significant"
    assert row.test is not None and row.test.e_value == pytest.approx(31.875)
    assert "stopped at 7 seeds (cap 50): the e-value 31.9 reached the threshold 20" in row.claim
    assert result.row("base").samples == 7  # the baseline ran only as far as the arm needed
    seq = result.summary.sequential
    assert seq is not None and seq.runs_recorded == 14 and seq.runs_saved == 100 - 14


def test_arm_with_no_effect_stops_as_futile() -> None:
    # Neither side ever flips: e stays 1; with 6 seeds left e(6,0) = 18.1 < 20: futile at 44/50.
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        scripted({"base": "A", "alt": "A"}),
        samples=2,
        reference="A",
        comparator="exact",
        executor="local",
        sequential={"max_samples": 50, "wave": 1},
    )
    row = result.row("alt")
    assert row.sequential is not None
    assert (row.sequential.stopped_for, row.sequential.seeds_used) == ("futile", 44)
    assert "futile" in row.claim and row.statistical_verdict == "not-significant"


def test_waves_decide_each_arm_and_save_runs(tmp_path: Path) -> None:
    result = _sweep(tmp_path / "o")
    stops = _stops(result)
    assert stops["strong"][0] == "significant" and stops["strong"][1] <= 20
    assert stops["same"][0] in ("futile", "max-samples")
    assert all(n % 4 == 0 for _, n in stops.values())  # looks fall on wave boundaries
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    seq = summary["sequential"]
    assert seq["runs_at_max_samples"] == 4 * 60
    assert seq["runs_saved"] == 240 - seq["runs_recorded"] > 0
    assert sum(seq["stopped"].values()) == 3
    keys = _keys(tmp_path / "o")
    assert len(keys) == len(set(keys)) == seq["runs_recorded"]
    # every arm's seeds are 0..k-1 and the baseline ran as far as the furthest arm
    for arm, (_, used) in stops.items():
        assert sorted(s for _, a, s in keys if a == arm) == list(range(used))
    assert sorted(s for _, a, s in keys if a == "base") == list(
        range(max(n for _, n in stops.values()))
    )


def test_without_sequential_nothing_changes() -> None:
    config = _config()
    del config["sequential"]
    result = run_sweep(resolve_sweep(validate_config(config), base_dir=TESTS), run_dir=None)
    assert all(r.samples_declared == 4 and r.sequential is None for r in result.rows)
    assert result.summary.sequential is None


class _StopAfter(LocalExecutor):
    """Requests a stop (as Ctrl-C does) after ``n`` records."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n

    def run(
        self, runner: RunnerRef, contexts: Sequence[RunContext] | RunFeed
    ) -> Iterator[RunRecord]:
        for i, record in enumerate(super().run(runner, contexts)):
            yield record
            if i + 1 >= self.n:
                self.request_stop()


def test_resume_mid_sweep_replays_the_same_decisions(tmp_path: Path) -> None:
    whole = _sweep(tmp_path / "whole")
    with pytest.raises(SweepInterrupted, match="runs recorded"):
        _sweep(tmp_path / "cut", executor=_StopAfter(37))
    assert len(_keys(tmp_path / "cut")) == 37
    resumed = _sweep(tmp_path / "cut")
    assert _stops(resumed) == _stops(whole)
    assert [r.model_dump(exclude={"claim"}) for r in resumed.rows] == [
        r.model_dump(exclude={"claim"}) for r in whole.rows
    ]
    keys = _keys(tmp_path / "cut")
    assert len(keys) == len(set(keys))  # no run executed twice
    assert resumed.summary.execution.runs_reused == 37
    assert resumed.summary.execution.runs_used == len(keys) - 37


def test_raising_max_samples_on_resume_continues_undecided_arms(tmp_path: Path) -> None:
    first = _sweep(tmp_path / "o", max_samples=12)
    capped = [a for a, (why, _) in _stops(first).items() if why == "max-samples"]
    assert capped, _stops(first)
    before = len(_keys(tmp_path / "o"))
    more = _sweep(tmp_path / "o", max_samples=60)
    assert more.summary.execution.runs_reused == before
    stops = _stops(more)
    assert all(stops[a][1] > 12 for a in capped)
    assert stops == _stops(_sweep(tmp_path / "fresh", max_samples=60))


class _Greedy(LocalExecutor):
    """Asks the feed for run-ahead work before every run, like a pool with idle workers."""

    def run(
        self, runner: RunnerRef, contexts: Sequence[RunContext] | RunFeed
    ) -> Iterator[RunRecord]:
        fn, feed = resolve_runner(runner), as_feed(contexts)
        while True:
            feed.top_up(50)
            taken = feed.take(1)
            if not taken:
                return
            yield execute_run(fn, taken[0], NO_RETRY, "local")


def test_decided_arms_queued_runs_are_cancelled(tmp_path: Path) -> None:
    out = tmp_path / "o"
    result = _sweep(out, executor=_Greedy())
    seq = result.summary.sequential
    assert seq is not None and seq.runs_cancelled > 0
    stops = _stops(result)
    used = stops["strong"][1]
    strong = sorted(s for _, a, s in _keys(out) if a == "strong")
    # run-ahead seeds of the decided arm were withdrawn, not run: at most one wave past its stop
    assert strong[:used] == list(range(used)) and len(strong) < used + 4
    assert _stops(_sweep(tmp_path / "plain")) == stops  # run-ahead never changes a decision


def test_tier_judges_the_arm_on_its_own_seeds_of_the_baseline() -> None:
    # The baseline flips once, at seed 30, which only the long-running null arm reaches. The
    # strong arm stopped at 8 seeds (two challengers: threshold 40; e(7,0) = 31.9 < 40 <=
    # e(8,0) = 56.9), so its tier sees a baseline that held on seeds 0..7: confirmed.
    runner = scripted({"base": lambda c: "B" if c.seed == 30 else "A", "alt": "B", "same": "A"})
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}, {"id": "same", "facets": {"x": 2}}],
        runner,
        samples=2,
        reference="A",
        comparator="exact",
        executor="local",
        sequential={"max_samples": 50, "wave": 1},
    )
    alt, base = result.row("alt"), result.row("base")
    assert alt.sequential is not None and alt.sequential.seeds_used == 8
    assert (alt.verdict, alt.reason) == ("confirmed", "majority-flip")
    assert base.samples > 30 and base.flips == 1  # the baseline row covers all its seeds


def test_example_config_runs_from_the_cli(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from counterfact.orchestrator.cli import main

    example = TESTS.parent / "configs" / "sequential.yaml"
    out = tmp_path / "o"
    args = ["run", str(example), "--executor", "local", "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "sequential: " in result.stdout and " saved); arms stopped: " in result.stdout
    rows = {d["arm"]: d for d in map(json.loads, (out / "verdicts.jsonl").read_text().splitlines())}
    assert rows["stale-index"]["sequential"]["stopped_for"] == "significant"
    assert rows["aa"]["statistical_verdict"] == "not-significant"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["schema_version"] == 10 and summary["sequential"]["runs_saved"] > 0


def test_no_reference_stops_every_arm_as_untestable() -> None:
    # No declared reference and the baseline's seed 0 fails: nothing to score against, so the
    # arms stop at the first look instead of sampling to the cap.
    base: list[object] = [RuntimeError("down")] + ["A"] * 99
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        scripted({"base": base, "alt": "B"}),
        samples=3,
        comparator="exact",
        executor="local",
        sequential={"max_samples": 60},
    )
    row = result.row("alt")
    assert row.sequential is not None
    assert (row.sequential.stopped_for, row.sequential.seeds_used) == ("untestable", 3)
    assert "no reference to test against" in row.claim


def test_unpaired_sequential_test_says_how_it_pairs() -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        scripted({"base": "A", "alt": "B"}),
        samples=2,
        reference="A",
        comparator="exact",
        executor="local",
        statistics={"pairing": "none"},
        sequential={"max_samples": 30, "wave": 2},
    )
    test = result.row("alt").test
    assert test is not None and test.pairing == "none"
    assert test.method.endswith("over runs paired by seed index") and test.e_value is not None


class _Shuffled(LocalExecutor):
    """Runs up to ``slots`` queued runs, then yields their records in a random order, as a pool
    of workers finishing out of order would (run-ahead asked for when slots are idle)."""

    def __init__(self, slots: int, seed: int) -> None:
        super().__init__()
        self.slots = slots
        self.rng = random.Random(seed)

    def run(
        self, runner: RunnerRef, contexts: Sequence[RunContext] | RunFeed
    ) -> Iterator[RunRecord]:
        fn, feed = resolve_runner(runner), as_feed(contexts)
        while True:
            feed.top_up(self.slots)
            batch = feed.take(self.rng.randint(1, self.slots))
            if not batch:
                return
            records = [execute_run(fn, ctx, NO_RETRY, "local") for ctx in batch]
            self.rng.shuffle(records)
            yield from records


@pytest.mark.parametrize("seed", range(5))
def test_decisions_do_not_depend_on_completion_order(tmp_path: Path, seed: int) -> None:
    # No declared reference here: seed 0 of the baseline is the reference and pair 0 is left
    # out of every look (rule 13).
    config = {"reference": None, "scenarios": [{"id": "s1"}, {"id": "s2", "reference": "A"}]}
    plain = _sweep(None, **config)
    shuffled = _sweep(tmp_path / "o", executor=_Shuffled(12, seed), **config)
    assert [r.model_dump(exclude={"runs_from_cache"}) for r in shuffled.rows] == [
        r.model_dump(exclude={"runs_from_cache"}) for r in plain.rows
    ]
    keys = _keys(tmp_path / "o")
    assert len(keys) == len(set(keys))
    s1 = [r for r in plain.rows if r.scenario == "s1" and r.test is not None]
    assert s1 and all(r.test.pairs_excluded == 1 for r in s1)  # type: ignore[union-attr]


def test_changing_the_design_on_resume_is_refused(tmp_path: Path) -> None:
    _sweep(tmp_path / "o", max_samples=12)
    with pytest.raises(ResumeConflictError, match=r"sequential design .*wave: 4 -> 8"):
        _sweep(tmp_path / "o", sequential={"max_samples": 60, "wave": 8})


def test_pooled_across_scenarios_multiplies_the_stopped_e_values() -> None:
    # Two scenarios: per challenger the pooled e-value is the product of its rows' e-values
    # (independent scenarios), and p = min(1, 1/product) before adjustment.
    result = _sweep(
        None,
        reference=None,
        scenarios=[{"id": "s1", "reference": "A"}, {"id": "s2", "reference": "A"}],
    )
    pooled = {p.arm: p for p in result.summary.pooled}
    assert set(pooled) == {"strong", "same", "mid"}
    for arm, record in pooled.items():
        rows = [r for r in result.rows if r.arm == arm]
        product = math.prod(r.sequential.e_value for r in rows)  # type: ignore[union-attr]
        assert record.e_value == pytest.approx(product, rel=1e-9)
        assert record.p_value == pytest.approx(min(1.0, 1 / product), rel=1e-9)
    assert pooled["strong"].secondary_reading == "significant"


def test_a_fix_is_found_sequentially_under_alternative_less() -> None:
    # The baseline always flips, the fix never: discordant pairs all the baseline's way. Under
    # 'less' the mirrored e-process stops it significant at 7 seeds (e = 31.9 >= 20, as above);
    # under 'greater' the same arm is futile.
    arms = [{"id": "base"}, {"id": "fix", "facets": {"x": 1}}]
    runner = scripted({"base": "B", "fix": "A"})
    kwargs: dict[str, Any] = {
        "samples": 2,
        "reference": "A",
        "comparator": "exact",
        "executor": "local",
        "sequential": {"max_samples": 50, "wave": 1},
    }
    less = compare_arms(arms, runner, statistics={"alternative": "less"}, **kwargs).row("fix")
    assert less.sequential is not None
    assert (less.sequential.stopped_for, less.sequential.seeds_used) == ("significant", 7)
    assert less.test is not None and less.test.alternative == "less"
    greater = compare_arms(arms, runner, **kwargs).row("fix")
    assert greater.sequential is not None and greater.sequential.stopped_for == "futile"


def test_min_effect_stops_a_null_arm_early_and_records_why(tmp_path: Path) -> None:
    # The 'same' arm flips at 0.05 like the baseline: without min_effect it runs to 44+ of 60
    # seeds (futile only once 20 is out of reach); with min_effect 0.3 the betting test rules out
    # an effect of 0.3 within a few waves. The strong arm (0.9) is still found.
    result = _sweep(
        tmp_path / "o",
        max_samples=200,
        sequential={"max_samples": 200, "wave": 4, "min_effect": 0.3},
    )
    rows = {r.arm: r for r in result.rows if r.sequential is not None}
    same = rows["same"].sequential
    assert same is not None
    assert same.stopped_for == "futile" and same.futile_because == "below-min-effect"
    assert same.seeds_used <= 40 and same.min_effect == 0.3
    assert same.futility_e_value is not None and same.futility_e_value >= 20
    assert "ruled out" in rows["same"].claim
    strong = rows["strong"].sequential
    assert strong is not None and strong.stopped_for == "significant"
    line = json.loads((tmp_path / "o" / "verdicts.jsonl").read_text().splitlines()[2])
    assert line["schema_version"] == VERDICT_SCHEMA_VERSION


def test_changing_the_direction_or_the_minimal_effect_on_resume_is_refused(tmp_path: Path) -> None:
    # A direction chosen after seeing the looks would spoil the e-process's error rate.
    _sweep(tmp_path / "o", max_samples=12)
    with pytest.raises(ResumeConflictError, match=r"alternative: None -> 'less'"):
        _sweep(tmp_path / "o", max_samples=12, statistics={"alternative": "less"})
    with pytest.raises(ResumeConflictError, match=r"min_effect: None -> 0.3"):
        _sweep(tmp_path / "o", sequential={"max_samples": 12, "wave": 4, "min_effect": 0.3})


def test_a_sequential_fix_is_worded_the_way_the_test_looks() -> None:
    arms = [{"id": "base"}, {"id": "fix", "facets": {"x": 1}}]
    row = compare_arms(
        arms,
        scripted({"base": "B", "fix": "A"}),
        samples=2,
        reference="A",
        comparator="exact",
        executor="local",
        statistics={"alternative": "less"},
        sequential={"max_samples": 50, "wave": 1},
    ).row("fix")
    assert "7 of 7 discordant seeds went the arm's way (the baseline flipped, it held)" in row.claim
