"""``counterfact plan RUN_DIR`` (issue 19 item 6): samples for a power, from a pilot."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import binom, binomtest, fisher_exact

from counterfact import RunContext, compare_arms
from counterfact.orchestrator.cli.plan_text import render_plan
from counterfact.orchestrator.drivers.plan import _design, _waves, plan_sweep
from counterfact.orchestrator.drivers.preflight import estimate, preflight_sweep
from counterfact.orchestrator.storage.recordfiles import runs_of, summary_of, verdicts_of
from counterfact.records.verdicts import VerdictRecord
from counterfact.verdicts.planning.design import Design
from counterfact.verdicts.planning.estimate import estimate_text
from counterfact.verdicts.planning.evalset import pools_of, question_grid
from counterfact.verdicts.planning.paired import plan_challenger
from counterfact.verdicts.planning.power_evalset import EvalDesign, power_at
from counterfact.verdicts.stats.settings import Waves

from ... import evalset_runners
from ...conftest import TESTS, write_config
from ...helpers import invoke
from ...verdicts.planning.test_power_sequential import exact_power

RATES = {"base": 0.1, "worse": 0.4, "same": 0.1}
SCENARIOS = [{"id": f"s{i}", "reference": "A"} for i in range(3)]


def runner(ctx: RunContext) -> dict[str, Any]:
    """Each arm flips at its own rate, independently per (scenario, arm, seed)."""
    draw = random.Random(f"{ctx.scenario.id}/{ctx.arm.id}/{ctx.seed}").random()
    return {"output": "B" if draw < RATES[ctx.arm.id] else "A", "cost": {"tokens": 100.0}}


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("plan") / "pilot"
    arms: list[dict[str, Any]] = [
        {"id": "base"},
        {"id": "worse", "facets": {"x": 1}},
        {"id": "same", "facets": {"x": 2}},
    ]
    compare_arms(
        arms,
        runner,
        samples=24,
        scenarios=SCENARIOS,
        comparator="exact",
        executor="local",
        runner_version="plan",
        out=out,
    )
    return out


def two_rates(base: float, arm: float) -> Callable[[RunContext], str]:
    """The baseline flips at ``base``, the challenger at ``arm``, independently per (scenario,
    arm, seed)."""

    def run(ctx: RunContext) -> str:
        rate = base if ctx.arm.id == "base" else arm
        draw = random.Random(f"{ctx.scenario.id}/{ctx.arm.id}/{ctx.seed}").random()
        return "B" if draw < rate else "A"

    return run


def pilot_of(out: Path, run: Callable[[RunContext], Any], arm: str = "worse", **kw: Any) -> Path:
    """A pilot of the baseline and one challenger ``arm`` (exact comparator, in-process)."""
    compare_arms(
        [{"id": "base"}, {"id": arm, "facets": {"x": 1}}],
        run,
        comparator="exact",
        executor=kw.pop("executor", "local"),
        out=out,
        **kw,
    )
    return out


def _independent_power(samples: int, level: float, sweeps: int = 4000) -> float:
    """Reference, independent of the engine's power code: simulate whole sweeps with the true
    rates (arm 0.4, baseline 0.1, independent), sum the discordant pairs over the 3 scenarios
    and apply scipy's one-sided binomial test at ``level``."""
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(sweeps):
        arm = rng.random((3, samples)) < 0.4
        base = rng.random((3, samples)) < 0.1
        n10, n01 = int(np.sum(arm & ~base)), int(np.sum(~arm & base))
        hits += binomtest(n10, n10 + n01, 0.5, alternative="greater").pvalue <= level
    return hits / sweeps


def test_the_plan_s_samples_reach_the_power_when_simulated_independently(pilot: Path) -> None:
    plan = plan_sweep(pilot, power=0.8)
    worse = next(c for c in plan.challengers if c.arm == "worse")
    assert worse.samples is not None and worse.power is not None and worse.power >= 0.8
    assert worse.runs == worse.samples * 3 * 3
    assert worse.cost == {"tokens": pytest.approx(100.0 * worse.runs)}
    # The pooled family holds the two challengers: Holm's per-test bound is 0.05 / 2.
    assert _independent_power(worse.samples, 0.025) >= 0.7
    same = next(c for c in plan.challengers if c.arm == "same")
    assert same.samples is None and same.note is not None and "--effect" in same.note


def test_a_declared_effect_plans_an_arm_the_pilot_saw_no_effect_for(pilot: Path) -> None:
    plan = plan_sweep(pilot, power=0.8, effect=0.3)
    same = next(c for c in plan.challengers if c.arm == "same")
    assert same.samples is not None and same.power is not None and same.power >= 0.8
    for s in same.scenarios:
        assert s.p10 == pytest.approx(s.p01 + 0.3)


def test_plan_cli_text_and_json(pilot: Path) -> None:
    code, out, err = invoke("plan", str(pilot))
    assert code == 0, err
    assert out.startswith("plan for ") and "worse:" in out and "samples per arm" in out
    code, out, err = invoke("plan", str(pilot), "--json", "--power", "0.9", "--concurrency", "4")
    assert code == 0, err
    data = json.loads(out)
    assert data["power_target"] == 0.9 and data["concurrency"] == 4.0
    assert data["concurrency_source"] == "given"
    assert {c["arm"] for c in data["challengers"]} == {"worse", "same"}
    worse = next(c for c in data["challengers"] if c["arm"] == "worse")
    assert set(worse) >= {"samples", "power", "runs", "cost", "wall_s", "scenarios"}


def test_plan_refuses_bad_input_in_one_line(pilot: Path, tmp_path: Path) -> None:
    code, _, err = invoke("plan", str(pilot), "--power", "1.5")
    assert code == 2 and "--power" in err
    code, _, err = invoke("plan", str(tmp_path))
    assert code == 2 and err.startswith("error:") and len(err.strip().splitlines()) == 1


def test_plan_for_a_fix_under_alternative_less(tmp_path: Path) -> None:
    pilot_of(
        tmp_path / "o",
        two_rates(0.5, 0.1),
        arm="fix",
        samples=40,
        scenarios=[{"id": "s0", "reference": "A"}],
        statistics={"alternative": "less"},
        runner_version="fix",
    )
    plan = plan_sweep(tmp_path / "o")
    (fix,) = plan.challengers
    assert plan.alternative == "less" and fix.power_method == "exact enumeration"
    assert fix.samples is not None and fix.power is not None and fix.power >= 0.8


def test_an_unpaired_sweep_is_planned_with_its_own_fisher_test(tmp_path: Path) -> None:
    # pairing: none, one challenger flipping at 0.5 against a baseline at 0.1, on 2 scenarios; the
    # family (per scenario, holm) is the one challenger: each scenario's test is at alpha 0.05.
    pilot_of(
        tmp_path / "o",
        two_rates(0.1, 0.5),
        samples=20,
        scenarios=[{"id": "s0", "reference": "A"}, {"id": "s1", "reference": "A"}],
        statistics={"pairing": "none"},
        runner_version="unpaired",
    )
    plan = plan_sweep(tmp_path / "o", power=0.8)
    (worse,) = plan.challengers
    assert plan.pairing == "none" and worse.power_method.startswith("Fisher exact")
    assert worse.samples is not None and worse.power is not None and worse.power >= 0.8
    assert worse.samples == max(s.samples or 0 for s in worse.scenarios)
    for s in worse.scenarios:
        assert s.p_arm is not None and s.p_base is not None and s.p_arm > s.p_base
    # Reference, independent of the engine's power code: simulate each scenario at the planned
    # samples with the pilot's rates, through scipy's fisher_exact (fixed seed, 2,000 draws).
    rng = np.random.default_rng(11)
    n = worse.samples
    for s in worse.scenarios:
        assert s.p_arm is not None and s.p_base is not None
        x, y = rng.binomial(n, s.p_arm, 2000), rng.binomial(n, s.p_base, 2000)
        hits = sum(
            fisher_exact([[a, n - a], [b, n - b]], alternative="greater").pvalue <= 0.05
            for a, b in zip(x, y, strict=True)
        )
        assert hits / 2000 >= 0.7
    code, out, err = invoke("plan", str(tmp_path / "o"))
    assert code == 0, err
    assert "Fisher exact (unpaired)" in out and "baseline 0." in out


def test_a_sequential_pilot_is_planned_for_its_e_process(tmp_path: Path) -> None:
    # A sequential pilot (first wave 8, waves of 4, cap 24) of one challenger flipping at 0.45
    # against a baseline at 0.1, independently per seed, on one scenario.
    pilot_of(
        tmp_path / "o",
        two_rates(0.1, 0.45),
        samples=8,
        scenarios=[{"id": "s0", "reference": "A"}],
        sequential={"max_samples": 24, "wave": 4},
        runner_version="seq",
    )
    plan = plan_sweep(tmp_path / "o", power=0.8)
    (worse,) = plan.challengers
    assert plan.sequential and worse.power_method.startswith("sequential e-process")
    assert worse.samples is not None and worse.power is not None and worse.power >= 0.8
    (s,) = worse.scenarios
    assert s.expected_samples is not None and 8 <= s.expected_samples <= worse.samples
    # Reference: the exact dynamic program of tests/verdicts/planning/test_power_sequential.py at the
    # pilot's own cells and settings (threshold 1/0.05 for one test), independent of the
    # simulation.
    rule = Waves(8, 4, worse.samples, 0.05, 20.0, "greater")
    assert exact_power(worse.samples, s.p10, s.p01, rule) >= 0.7
    code, out, err = invoke("plan", str(tmp_path / "o"))
    assert code == 0, err
    assert "max_samples" in out and "seeds on average" in out


def test_a_sequential_plan_keeps_min_effect_when_a_scenario_was_untestable(
    tmp_path: Path,
) -> None:
    # s0's reference is the baseline's seed 0, whose run fails: s0 cannot be tested and its row
    # records no min_effect. The plan must still simulate the sweep's min_effect futility.
    rates = two_rates(0.1, 0.5)

    def runner(ctx: RunContext) -> str:
        if ctx.scenario.id == "s0" and ctx.arm.id == "base" and ctx.seed == 0:
            raise RuntimeError("no reference today")
        return rates(ctx)

    pilot_of(
        tmp_path / "o",
        runner,
        samples=8,
        scenarios=[{"id": "s0"}, {"id": "s1", "reference": "A"}],
        sequential={"max_samples": 24, "wave": 8, "min_effect": 0.3},
        runner_version="untestable",
    )
    summary, rows = summary_of(tmp_path / "o"), verdicts_of(tmp_path / "o")
    assert summary is not None
    seq = {r.scenario: r.sequential for r in rows if not r.is_baseline}
    assert seq["s0"] is not None and seq["s0"].stopped_for == "untestable"
    waves = _waves(summary, rows)
    assert waves is not None and waves.min_effect == 0.3 and waves.samples == 8
    plan = plan_sweep(tmp_path / "o")
    (worse,) = plan.challengers
    assert worse.note is not None and "without a test to plan from" in worse.note


def test_an_unpaired_plan_leaves_out_records_too_old_to_hold_n11(tmp_path: Path) -> None:
    # Before record version 5 a test had no n11 (pairs where both flipped): the arm's and the
    # baseline's flip rates cannot be read from it, so the scenario is left out, and said so.
    pilot_of(
        tmp_path / "o",
        two_rates(0.1, 0.6),
        samples=16,
        scenarios=[{"id": "s0", "reference": "A"}, {"id": "s1", "reference": "A"}],
        statistics={"pairing": "none"},
        runner_version="old",
    )
    rows = [r for r in verdicts_of(tmp_path / "o") if not r.is_baseline]
    old = [
        r.model_copy(update={"test": r.test.model_copy(update={"n11": None})})
        if r.scenario == "s0" and r.test is not None
        else r
        for r in rows
    ]
    design = Design(0.05, "holm", "greater", 1, 1, "none")
    planned = plan_challenger(old, design, 0.8)
    assert [s.scenario for s in planned.scenarios] == ["s1"]
    assert planned.note is not None and "1 without a test to plan from" in planned.note


def test_wall_time_is_start_up_runs_at_the_achieved_pace_and_judging(pilot: Path) -> None:
    plan = plan_sweep(pilot)
    worse = next(c for c in plan.challengers if c.arm == "worse")
    assert plan.concurrency_source == "measured" and plan.run_s_mean is not None
    assert plan.concurrency == plan.concurrency_measured
    wall, runs = worse.wall, worse.runs
    assert wall is not None and runs is not None and plan.judging_s is not None
    # runs / (achieved in flight / mean run time); judging as the pilot's: same questions x arms
    assert wall.runs_s == pytest.approx(runs * plan.run_s_mean / plan.concurrency)
    assert wall.judging_s == pytest.approx(plan.judging_s)
    assert worse.wall_s == pytest.approx(wall.startup_s + wall.runs_s + wall.judging_s)


def test_a_process_start_up_adds_exactly_its_seconds_to_every_wall_time(pilot: Path) -> None:
    # issue 43 item 8: the estimate left out the interpreter and its imports
    bare, started = plan_sweep(pilot), plan_sweep(pilot, process_startup_s=7.5)
    assert bare.process_startup_s is None and started.process_startup_s == 7.5
    for old, new in zip(bare.challengers, started.challengers, strict=True):
        if old.wall_s is None:
            continue
        assert new.wall is not None and new.wall.process_startup_s == 7.5
        assert new.wall_s == pytest.approx(old.wall_s + 7.5)
        if old.eval_set is not None and old.eval_set.wall_s is not None:
            assert new.eval_set is not None and new.eval_set.wall_s is not None
            assert new.eval_set.wall_s == pytest.approx(old.eval_set.wall_s + 7.5)
    text = render_plan(started)
    assert "process start-up ~7.5 s" in text and "this command's own" in text


def test_the_plan_command_measures_its_own_start_up(pilot: Path) -> None:
    """Reference: the whole child process's wall time, timed from outside, bounds it above."""
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "counterfact.orchestrator.cli", "plan", str(pilot), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    outside = time.perf_counter() - began
    plan = json.loads(done.stdout)
    startup = plan["process_startup_s"]
    # at least the imports (numpy and scipy alone take well over 0.05 s), at most the process
    assert 0.05 < startup < outside
    worse = next(c for c in plan["challengers"] if c["arm"] == "worse")
    wall = worse["wall"]
    assert wall["process_startup_s"] == startup
    parts = startup + wall["startup_s"] + wall["runs_s"] + wall["judging_s"]
    assert worse["wall_s"] == pytest.approx(parts)


def test_the_configured_concurrency_is_a_ceiling_not_the_estimate(tmp_path: Path) -> None:
    pilot_of(
        tmp_path / "o",
        runner,
        samples=12,
        scenarios=SCENARIOS[:1],
        executor={"kind": "local", "concurrency": 32},
        runner_version="conc",
    )
    configured = plan_sweep(tmp_path / "o")
    assert configured.concurrency_source == "measured"
    assert configured.concurrency == configured.concurrency_measured
    assert configured.concurrency_configured == 32.0
    given = plan_sweep(tmp_path / "o", concurrency=10)
    assert (given.concurrency, given.concurrency_source) == (10.0, "given")
    code, out, err = invoke("plan", str(tmp_path / "o"))
    assert code == 0, err
    assert "(the pilot achieved)" in out and "executor.concurrency 32 is only a ceiling" in out
    assert "judging and report ~" in out and "runs ~" in out


def test_a_rate_limit_bounds_the_planned_wall_time(tmp_path: Path) -> None:
    rpm = 1200.0
    pilot_of(
        tmp_path / "o",
        runner,
        samples=6,
        scenarios=SCENARIOS[:1],
        executor={"kind": "local", "concurrency": 8, "rate_limit": {"requests_per_minute": rpm}},
        runner_version="rate",
    )
    plan = plan_sweep(tmp_path / "o", concurrency=1000, effect=0.3)  # the pilot's is noise
    assert plan.requests_per_minute == rpm
    (c,) = plan.challengers
    assert c.runs is not None and c.wall is not None
    # 1000 in flight would finish at once; 1200 a minute is 20 a second
    assert c.wall.rate_bound and c.wall.runs_s == pytest.approx(c.runs / (rpm / 60))
    code, out, err = invoke("plan", str(tmp_path / "o"), "--concurrency", "1000", "--effect", "0.3")
    assert code == 0, err
    assert f"rate limit {rpm:g}/min sets the pace" in out


def read_challenger(pilot: Path, arm: str) -> list[VerdictRecord]:
    return [r for r in verdicts_of(pilot) if r.arm == arm]


def _design_of(pilot: Path) -> Design:
    summary = summary_of(pilot)
    assert summary is not None
    return _design(summary, verdicts_of(pilot), None)


QUESTIONS = [{"id": f"q{i}", "reference": "right"} for i in range(40)]


def evalset_pilot(out: Path, run: Callable[[RunContext], Any], *challengers: str) -> Path:
    """A 40-question pilot at 3 seeds of the baseline and ``challengers``."""
    arms: list[dict[str, Any]] = [{"id": "base"}]
    arms += [{"id": a, "facets": {"x": i}} for i, a in enumerate(challengers, 1)]
    compare_arms(
        arms,
        run,
        scenarios=QUESTIONS,
        samples=3,
        comparator="contains",
        executor="local",
        runner_version="evalset",
        out=out,
    )
    return out


def test_the_eval_set_plan_reaches_the_power_and_fewer_questions_do_not(tmp_path: Path) -> None:
    pilot = evalset_pilot(tmp_path / "p", evalset_runners.priced_small_effect, "worse")
    plan = plan_sweep(pilot, power=0.8)
    (worse,) = plan.challengers
    e = worse.eval_set
    assert e is not None and e.questions is not None and e.seeds is not None
    assert e.seeds_vary and not e.seeds_add_nothing and e.pilot_questions == 40
    # re-check at the recommendation with more sweeps and another seed (standard errors of
    # both estimates, 3 of them either way)
    assert plan.adjust == "holm" and plan.alternative == "greater"
    design = EvalDesign(plan.alpha, "holm", "greater")
    _, pools, _, _ = pools_of({"worse": read_challenger(pilot, "worse")}, _design_of(pilot))
    (again, se) = power_at(pools, e.questions, e.seeds, design, 3000, seed=99)[0]
    assert e.power_se is not None
    margin = 3 * math.hypot(se, e.power_se)
    assert again >= 0.8 - margin
    grid = question_grid(2)
    smaller = grid[grid.index(e.questions) - 1]
    (below, se_below) = power_at(pools, smaller, e.seeds, design, 3000, seed=99)[0]
    assert below < 0.8 + 3 * se_below
    half = power_at(pools, e.questions // 2, e.seeds, design, 3000, seed=99)[0][0]
    assert half < 0.8
    # priced: questions x seeds x arms runs at 0.0045 usd and 1,234 tokens each
    assert e.runs == e.questions * e.seeds * 2
    assert e.cost == {"tokens": pytest.approx(1234 * e.runs), "usd": pytest.approx(0.0045 * e.runs)}
    code, out, err = invoke("plan", str(pilot))
    assert code == 0, err
    assert f"{e.questions:,} questions x {e.seeds} seeds each" in out
    assert f"usd {0.0045 * e.runs:,.2f}" in out and f"tokens {1234 * e.runs:,}" in out
    assert "usd ~0" not in out


def test_a_copies_pilot_plans_the_fewest_seeds_and_says_seeds_add_nothing(tmp_path: Path) -> None:
    pilot = evalset_pilot(
        tmp_path / "c", evalset_runners.identical_epochs, "breaks7fixes3", "breaks10"
    )
    plan = plan_sweep(pilot, power=0.8)
    # breaks7fixes3 moved 7 questions up and 3 down: its interval holds 0, so it is not planned
    mixed = next(c for c in plan.challengers if c.arm == "breaks7fixes3")
    assert mixed.withheld == "noise" and mixed.eval_set is None
    for c in plan_sweep(pilot, power=0.8, effect=0.25).challengers:
        e = c.eval_set
        assert e is not None and not e.seeds_vary and e.seeds_add_nothing
        assert e.seeds == 2 and [g.seeds for g in e.grid] == [2]
        assert e.note is not None and "more seeds add nothing" in e.note
    breaks10 = next(c.eval_set for c in plan.challengers if c.arm == "breaks10")
    assert breaks10 is not None and breaks10.questions is not None
    code, out, err = invoke("plan", str(pilot))
    assert code == 0, err
    assert "only more questions help" in out


def test_a_one_question_pilot_keeps_the_per_question_plan(tmp_path: Path) -> None:
    pilot_of(tmp_path / "o", two_rates(0.1, 0.5), samples=12, scenarios=SCENARIOS[:1])
    (c,) = plan_sweep(tmp_path / "o").challengers
    assert c.eval_set is None and c.samples is not None


def test_validate_smoke_and_plan_print_the_same_figures_for_the_same_runs(
    tmp_path: Path,
) -> None:
    cfg = write_config(
        tmp_path,
        f"name: e\nrunner: {TESTS / 'evalset_runners.py'}:priced_small_effect\nsamples: 2\n"
        "scenarios: [{id: q0, reference: right}, {id: q1, reference: right}]\n"
        "comparator: contains\nexecutor: {kind: local, concurrency: 2}\n"
        "arms: [{id: base}, {id: worse, facets: {x: 1}}]\n",
    )
    code, _, err = invoke("run", str(cfg), "--out", str(tmp_path / "p"), "--no-report")
    assert code == 0, err
    plan = plan_sweep(tmp_path / "p", concurrency=2.0, effect=0.3)  # 2 x 2 pilot: noise
    (c,) = plan.challengers
    assert c.runs is not None and c.wall is not None
    sweep, _ = preflight_sweep(str(cfg), (), None, None, str(tmp_path / "v"))
    # the pilot's own runs as the smoke runs: validate's estimate of the plan's runs
    found = estimate(sweep, list(runs_of(tmp_path / "p")), c.runs)
    assert found.spend == pytest.approx(c.cost) and found.runs_s == pytest.approx(c.wall.runs_s)
    assert found.in_flight == plan.concurrency == 2.0
    _, out, _ = invoke("plan", str(tmp_path / "p"), "--concurrency", "2", "--effect", "0.3")
    line = estimate_text(found)
    same = line[: line.index(" run(s) in flight")]  # then the source: configured, given
    assert same.split("; wall time")[0] in out  # runs and spend
    assert same.split(" = ")[1] in out  # the runs' wall time and pace


def _copies_truth_power(
    questions: int, up: float, down: float, alpha: float
) -> tuple[float, float]:
    """Reference, independent of the engine's simulation: whole sweeps of a copies program
    (each question moves by +1 or -1 on every seed, or not at all), drawn with numpy from the
    true question shares, judged by scipy's one-sided sign test over the questions that moved
    (the sign-flip test when every move has one size). 20,000 sweeps, fixed rng."""
    sweeps = 20_000
    counts = np.random.default_rng(43).multinomial(questions, [up, down, 1 - up - down], sweeps)
    moved = counts[:, 0] + counts[:, 1]
    p = binom.sf(counts[:, 0] - 1, moved, 0.5)
    share = float(np.mean((p <= alpha) & (moved > 0)))
    return share, math.sqrt(share * (1 - share) / sweeps)


def test_an_effect_on_an_a_a_copies_pilot_is_planned_per_question(tmp_path: Path) -> None:
    # issue 43 item 1: the sides disagree on 16 of 40 questions, 8 each way, every seed a copy.
    # Planning --effect 0.2 per seed gave a mean effect of -0.04 (the 8 questions the baseline
    # alone failed kept -1) and "out of reach".
    pilot = evalset_pilot(tmp_path / "aa", evalset_runners.aa_copies, "same")
    plan = plan_sweep(pilot, power=0.8, effect=0.2)
    (same,) = plan.challengers
    e = same.eval_set
    assert e is not None and e.questions is not None and e.seeds == 2
    assert e.power is not None and e.power_se is not None
    # The truth the effect model stands for: of the A/A questions 20% fail on the baseline
    # alone, 20% on the arm alone, 60% on neither; the arm newly fails a fraction 0.2 of all
    # questions, every seed, drawn from those it held (0.8): a quarter of each kind. Up: 0.2 +
    # 0.6 / 4 = 0.35; down: 0.2 * 3 / 4 = 0.15 (mean move 0.2).
    realised, se = _copies_truth_power(e.questions, 0.35, 0.15, 0.05)
    assert abs(realised - e.power) <= 3 * math.hypot(se, e.power_se)
    assert realised >= 0.8 - 3 * math.hypot(se, e.power_se)


def test_a_placebo_reports_its_false_alarm_check_and_noise_is_not_planned(tmp_path: Path) -> None:
    # issue 39 item 2: a real pilot's plan gave "150 questions x 2 seeds (power 0.85)" for its
    # placebo: fresh arm, and thousands of questions for an arm whose interval held 0.
    out = tmp_path / "p"
    compare_arms(
        [{"id": "base"}, {"id": "fresh", "placebo": "fresh"}, {"id": "same", "facets": {"x": 1}}],
        evalset_runners.small_effect,
        scenarios=QUESTIONS[:16],
        samples=3,
        comparator="contains",
        executor="local",
        runner_version="placebo-plan",
        out=out,
    )
    plan = plan_sweep(out, power=0.8)
    fresh = next(c for c in plan.challengers if c.arm == "fresh")
    assert fresh.withheld == "placebo" and fresh.samples is None and fresh.eval_set is None
    assert fresh.pilot_effect is not None and fresh.note is not None
    assert fresh.note.startswith("placebo: its effect ") and "no power target" in fresh.note
    same = next(c for c in plan.challengers if c.arm == "same")  # rate 0.2 like the baseline
    e = same.pilot_effect
    assert e is not None and e.low <= 0 <= e.high
    assert same.withheld == "noise" and same.samples is None and same.eval_set is None
    assert same.note is not None and "includes 0" in same.note and "--effect" in same.note
    # a declared effect is planned for the arm; the placebo stays a check
    declared = {c.arm: c for c in plan_sweep(out, power=0.8, effect=0.3).challengers}
    assert declared["same"].withheld is None and declared["same"].eval_set is not None
    assert declared["same"].eval_set.questions is not None
    assert declared["fresh"].withheld == "placebo"
    code, text, err = invoke("plan", str(out))
    assert code == 0, err
    assert "placebo: its effect " in text and "includes 0" in text


def test_a_fix_under_the_default_test_is_named_and_the_direction_option_plans_it(
    tmp_path: Path,
) -> None:
    # issue 39 item 2: an improvement read "out of reach ... no effect the test's way"
    pilot_of(
        tmp_path / "o",
        two_rates(0.5, 0.1),
        arm="fix",
        samples=24,
        scenarios=SCENARIOS,
        runner_version="fix-greater",
    )
    (fix,) = plan_sweep(tmp_path / "o").challengers
    assert fix.withheld == "other-direction" and fix.samples is None
    assert fix.note is not None and "the arm fixes" in fix.note
    assert "--alternative less" in fix.note
    (fix,) = plan_sweep(tmp_path / "o", alternative="less").challengers
    assert fix.withheld is None and fix.samples is not None
    code, text, err = invoke("plan", str(tmp_path / "o"), "--alternative", "less")
    assert code == 0, err
    assert "samples per arm" in text and "(less)" in text
