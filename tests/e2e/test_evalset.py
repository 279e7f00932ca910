"""The eval set is the unit (issue 26): one verdict per challenger over every question, valid
when epochs repeat, read by the gate, printed first, on the in-process executor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from counterfact import RunContext, RunResult, compare_arms
from counterfact.records import read_arms, read_summary
from tests.helpers import invoke

RUNNERS = Path(__file__).parents[1] / "evalset_runners.py"


def _sweep(tmp_path: Path, runner: str, questions: int, samples: int, arms: list[str]) -> Path:
    with (tmp_path / "q.jsonl").open("w") as fh:
        for i in range(questions):
            fh.write(json.dumps({"id": f"q{i}", "inputs": {}, "reference": "right"}) + "\n")
    declared = "\n".join(
        f"  - id: {arm}\n    facets: {{variant: {arm}}}" for arm in ["baseline", *arms]
    )
    config = tmp_path / "sweep.yaml"
    config.write_text(
        f"name: ev\nrunner: {RUNNERS}:{runner}\nsamples: {samples}\n"
        "scenarios: {file: q.jsonl}\ncomparator: {kind: contains}\n"
        f"arms:\n{declared}\nexecutor: {{kind: local}}\n"
    )
    return config


def test_identical_epochs_break_7_fix_3_is_not_significant_but_break_10_is(
    tmp_path: Path,
) -> None:
    config = _sweep(tmp_path, "identical_epochs", 24, 8, ["breaks7fixes3", "breaks10"])
    out = tmp_path / "o"
    code, stdout, _ = invoke("run", str(config), "--out", str(out), "--fail-on", "significant")
    assert code == 3
    arms = {a.arm: a for a in read_arms(out)}
    mixed, broken = arms["breaks7fixes3"], arms["breaks10"]
    # 7 up, 3 down over 10 moved questions: P(Bin(10, 1/2) >= 7) = 176/1024 (Holm over 2)
    assert mixed.statistical_verdict == "not-significant" and mixed.verdict == "not-confirmed"
    assert mixed.p_value == pytest.approx(176 / 1024)
    assert (mixed.questions_up, mixed.questions_down) == (7, 3)
    assert mixed.effect is not None and mixed.effect.low < 0 < mixed.effect.high
    assert mixed.interval_agrees is True
    # 10 of 10 moved questions the arm's way: 2**-10, Holm-adjusted over 2 challengers
    assert broken.statistical_verdict == "significant" and broken.verdict == "confirmed"
    assert broken.p_adjusted == pytest.approx(2 * 2**-10)
    assert broken.effect is not None and broken.effect.low > 0
    for record in arms.values():
        assert not record.seeds_vary
        assert record.effective_pairs == pytest.approx(24)
    # the stratified McNemar counts each copy: secondary, and flagged where it disagrees
    assert mixed.stratified is not None and mixed.stratified.disagrees
    lines = stdout.splitlines()
    assert lines[0].startswith("arm-level verdicts over 24 questions x 8 seeds")
    assert lines[1].startswith("  breaks7fixes3: not-confirmed (not-significant)")
    assert "answers never vary within a question: the 24 questions are the sample" in stdout
    assert not any("breaks7fixes3: confirmed" in line for line in lines)
    # no question alone is significant: 8 of 8 seeds is p = 1/256, Holm over 48 rows
    rows = [json.loads(line) for line in (out / "verdicts.jsonl").read_text().splitlines()]
    assert not any(r["statistical_verdict"] == "significant" for r in rows)
    code, _, _ = invoke("run", str(config), "--out", str(out), "--fail-on", "scenario-significant")
    assert code == 0


def test_a_set_significant_where_no_question_can_be_fails_the_gate(tmp_path: Path) -> None:
    config = _sweep(tmp_path, "small_effect", 60, 4, ["worse"])
    out = tmp_path / "o"
    code, stdout, stderr = invoke("run", str(config), "--out", str(out), "--fail-on", "significant")
    assert code == 3, stdout + stderr
    (worse,) = read_arms(out)
    assert worse.statistical_verdict == "significant"
    assert worse.seeds_vary
    first = stdout.splitlines()[:2]
    assert first[0].startswith("arm-level verdicts over 60 questions x 4 seeds")
    assert first[1].startswith("  worse: confirmed (significant)")
    assert "fail-on: 1 match(es): worse: significant" in stderr
    assert "could not fire" not in stderr
    # 4 seeds: no single question's test can reach alpha (1/16 > 0.05)
    rows = [json.loads(line) for line in (out / "verdicts.jsonl").read_text().splitlines()]
    assert {r["statistical_verdict"] for r in rows if not r["is_baseline"]} == {"underpowered"}
    code, _, stderr = invoke(
        "run", str(config), "--out", str(out), "--fail-on", "scenario-significant"
    )
    assert code == 0 and "fail-on scenario-significant: this gate could not fire" in stderr


def test_the_console_is_short_and_detail_brings_the_table(tmp_path: Path) -> None:
    config = _sweep(tmp_path, "small_effect", 200, 3, ["worse", "other"])
    out = tmp_path / "o"
    code, stdout, _ = invoke("run", str(config), "--out", str(out), "--no-report")
    assert code == 0
    assert len(stdout.splitlines()) <= 20
    assert "per-question table and claims (600 rows): --detail" in stdout
    assert "spend: no run reported a cost" in stdout
    code, detailed, _ = invoke("run", str(config), "--out", str(out), "--no-report", "--detail")
    assert code == 0
    assert len(detailed.splitlines()) > 400
    assert detailed.startswith(stdout.splitlines()[0])


def test_arms_jsonl_is_the_summarys_arms(tmp_path: Path) -> None:
    config = _sweep(tmp_path, "small_effect", 30, 3, ["worse"])
    out = tmp_path / "o"
    invoke("run", str(config), "--out", str(out), "--no-report")
    assert read_arms(out) == read_summary(out).arms


def _costly(ctx: RunContext) -> RunResult:
    usd = 0.0125 if ctx.arm.facets else 0.01
    return RunResult(output="right", cost={"usd": usd, "tokens": 100.0})


def test_spend_is_summed_per_arm_and_overall() -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        _costly,
        samples=4,
        scenarios=[{"id": f"q{i}", "reference": "right"} for i in range(5)],
        comparator="contains",
        executor="local",
    )
    spend = result.summary.execution.spend
    assert spend is not None
    # 20 runs an arm: 20 * 0.01 and 20 * 0.0125
    assert spend.by_arm == {
        "base": {"tokens": 2000.0, "usd": 0.2},
        "alt": {"tokens": 2000.0, "usd": 0.25},
    }
    assert spend.total == {"tokens": 4000.0, "usd": 0.45}
    assert spend.runs_with_cost == 40


def test_one_question_keeps_the_rows_verdict() -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        lambda ctx: "wrong" if ctx.arm.facets else "right",
        samples=8,
        scenarios=[{"id": "q0", "reference": "right"}],
        comparator="contains",
        executor="local",
    )
    (arm,) = result.summary.arms
    row = result.row("alt")
    assert (arm.verdict, arm.statistical_verdict) == (row.verdict, row.statistical_verdict)
    assert row.test is not None and arm.p_value == row.test.p_value
    assert arm.questions == 1 and "seeds are the sample" in arm.method


def test_spend_per_arm_follows_the_sweeps_arm_order_not_arrival() -> None:
    from counterfact.orchestrator.engine.pacing.spend import SpendTally
    from tests.helpers import run_record

    tally = SpendTally(("baseline", "stale", "large"))
    for arm in ("large", "stale", "baseline", "large"):  # finished in another order
        tally.observe(run_record(0, arm, cost={"tokens": 10.0}))
    assert list(tally.record().by_arm) == ["baseline", "stale", "large"]


def test_a_one_question_arm_keeps_its_rows_doubts_and_is_never_sure_when_inconclusive() -> None:
    # issue 43 item 3: the arm took the row's inconclusive tier but dropped the row's doubts
    # (verdict-inconclusive among them), so it read "inconclusive" and "sure" at once
    from tests.evalset_runners import one_question_effect

    result = compare_arms(
        [{"id": "baseline", "facets": {"v": "b"}}, {"id": "worse", "facets": {"v": "w"}}],
        one_question_effect,
        samples=20,
        reference="right",
        comparator="contains",
        executor="local",
    )
    row = result.row("worse")
    (arm,) = result.summary.arms
    assert row.verdict == "inconclusive" and row.standing == "not-sure"
    # 16 arm-only flips (seeds 4-19) against 1 baseline-only flip (seed 3) over 20 pairs: the
    # exact McNemar p is P(Bin(17, 1/2) >= 16) = 18/131072, by hand and by
    # scipy.stats.binomtest(16, 17, alternative="greater").pvalue
    assert arm.p_value == pytest.approx(18 / 131072)
    assert arm.statistical_verdict == "significant"
    assert arm.verdict == "inconclusive"
    assert arm.standing == "not-sure"
    assert arm.reasons == row.reasons
    assert [r.code for r in arm.reasons] == ["verdict-inconclusive", "tier-test-disagree"]


def test_the_arm_interval_is_adjusted_over_the_challengers_as_its_test_is() -> None:
    # issue 43 item 2: the test was Holm-adjusted over 3 challengers but its interval was not,
    # so p 0.033 (adjusted 0.098, not significant) came with an interval above 0, "not-sure"
    from tests.evalset_runners import holm_edge

    result = compare_arms(
        [{"id": a, "facets": {"v": a}} for a in ("baseline", "worse", "same1", "same2")],
        holm_edge,
        samples=4,
        scenarios=[{"id": f"q{i}", "inputs": {}, "reference": "right"} for i in range(12)],
        comparator="contains",
        executor="local",
    )
    arms = {a.arm: a for a in result.summary.arms}
    worse = arms["worse"]
    # 9 questions up, 2 down (copies): the sign test P(Bin(11, 1/2) >= 9) = 67/2048, by hand and
    # scipy.stats.binomtest(9, 11, alternative="greater"); Holm over 3: 3 * 67/2048 > 0.05
    assert worse.p_value == pytest.approx(67 / 2048)
    assert worse.p_adjusted == pytest.approx(3 * 67 / 2048)
    assert worse.statistical_verdict == "not-significant"
    # the interval is two-sided at 1 - 2 * 0.05 / 3 (one-sided 0.05 / 3 on the tested side)
    assert worse.effect is not None and worse.effect.level == pytest.approx(1 - 0.1 / 3)
    assert worse.effect.low < 0 < worse.effect.high
    assert worse.interval_agrees is True
    assert "interval-test-disagree" not in {r.code for r in worse.reasons}


def test_the_per_question_table_says_its_rows_are_not_a_test(tmp_path: Path) -> None:
    # issue 43 item 7: A/A question rows read "confirmed" in a few percent of rows (one in five
    # on copies, docs/statistics.md): the detail table says so above the rows
    config = _sweep(tmp_path, "small_effect", 6, 3, ["worse"])
    code, stdout, stderr = invoke("run", str(config), "--out", str(tmp_path / "o"), "--detail")
    assert code == 0, stdout + stderr
    lines = stdout.splitlines()
    note = next(i for i, line in enumerate(lines) if "row's tier is not a test" in line)
    assert note < next(i for i, line in enumerate(lines) if line.startswith("scenario"))


def test_a_fix_is_said_in_words_with_its_p_and_each_side_s_flip_rate(tmp_path: Path) -> None:
    """Issue 39 item 3: a change that fixed 10 questions and broke none read "not-confirmed
    (not-significant), p 1, sure", with nothing saying the effect went the other way and no flip
    rate beside the baseline's."""
    config = _sweep(tmp_path, "fixes_ten", 12, 3, ["fixer"])
    out = tmp_path / "o"
    code, stdout, _ = invoke("run", str(config), "--out", str(out))
    assert code == 0
    (fixer,) = read_arms(out)
    assert (fixer.verdict, fixer.p_value) == ("not-confirmed", 1.0)
    # the other way: 10 of 10 moved questions fixed, 2**-10 (exact sign-flip enumeration)
    assert fixer.other_way_p == pytest.approx(2**-10)
    assert (fixer.flips, fixer.baseline_flips, fixer.pairs) == (0, 30, 36)
    assert fixer.arm_seeds_vary is False
    line = next(x for x in stdout.splitlines() if x.startswith("  fixer:"))
    assert "breaks 0 question(s), fixes 10 of 12" in line
    assert "flips 0/36 (0%) vs the baseline's 30/36 (83%)" in line
    assert "the arm fixes more than it breaks: 10 question(s) fixed, 0 broken, p 0.00098 " in (
        stdout
    )
    assert "that way, unadjusted" in stdout


def test_fail_on_tells_breaks_from_fixes_under_a_two_sided_test(tmp_path: Path) -> None:
    """Under ``two-sided``, ``--fail-on confirmed`` failed CI on this fix; ``breaks`` does not."""
    config = _sweep(tmp_path, "fixes_ten", 12, 3, ["fixer"])
    config.write_text(config.read_text() + "statistics: {alternative: two-sided}\n")
    run = ["run", str(config), "--out", str(tmp_path / "o")]
    assert invoke(*run, "--fail-on", "breaks")[0] == 0
    code, _, err = invoke(*run, "--fail-on", "fixes")
    assert code == 3 and "fixer: fixes" in err
    assert invoke(*run, "--fail-on", "confirmed")[0] == 3


def test_secondary_blocks_say_so_in_the_record(tmp_path: Path) -> None:
    """Issue 39: summary.json's stratified block read ``statistical_verdict: significant`` beside
    an arm whose verdict was not; a tool reading it saw "significant"."""
    config = _sweep(tmp_path, "identical_epochs", 24, 8, ["breaks7fixes3"])
    assert invoke("run", str(config), "--out", str(tmp_path / "o"))[0] == 0
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    (pooled,) = summary["pooled"]
    assert pooled["role"] == "secondary" and "independent" in pooled["holds_if"]
    assert "statistical_verdict" not in pooled and pooled["secondary_reading"] == "significant"
    (arm,) = summary["arms"]
    assert (
        arm["stratified"]["role"] == "secondary" and "statistical_verdict" not in arm["stratified"]
    )
    # a summary written before the rename still loads, its word read as the secondary reading
    from counterfact.records.summary import PooledRecord

    old = {k: v for k, v in pooled.items() if k not in ("role", "holds_if", "secondary_reading")}
    assert PooledRecord.model_validate(old | {"statistical_verdict": "significant"}).role == (
        "secondary"
    )


def test_an_arm_whose_outputs_equal_the_baseline_s_is_named_a_no_op(tmp_path: Path) -> None:
    """Issue 39: an arm whose outputs equal the baseline's on every seed (a server that dropped
    the system prompt) read ``not-confirmed``, not "this arm changed nothing the model saw"."""
    config = _sweep(tmp_path, "identical_epochs", 12, 3, ["dropped", "breaks10"])
    out = tmp_path / "o"
    code, stdout, _ = invoke("run", str(config), "--out", str(out))
    assert code == 0
    arms = {a.arm: a for a in read_arms(out)}
    assert arms["dropped"].outputs_as_baseline is True  # the runner ignores its facet
    assert arms["breaks10"].outputs_as_baseline is False
    assert "the arm's outputs equal the baseline's on every seed of every question" in stdout
    rows = [json.loads(x) for x in (out / "verdicts.jsonl").read_text().splitlines()]
    assert {r["outputs_as_baseline"] for r in rows if r["arm"] == "dropped"} == {True}
    assert {r["outputs_as_baseline"] for r in rows if r["arm"] == "baseline"} == {None}
