"""The bisect driver and CLI on the in-process executor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from counterfact import ConfigError, RunContext, compare_arms, find_culprits
from counterfact.orchestrator.cli import main

from ...conftest import TESTS, write_config


class Program:
    """Answers 'wrong' while fact:c is in its context; counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, ctx: RunContext) -> dict[str, object]:
        self.calls += 1
        wrong = "fact:c" not in ctx.arm.ablations
        return {"output": "wrong" if wrong else "right", "cost": {"loops": 3.0 if wrong else 1.0}}


def test_runs_used_equals_runner_calls_and_cache_hits_are_free(tmp_path: Path) -> None:
    program = Program()
    result = find_culprits(
        ["fact:a", "fact:b", "fact:c"],
        program,
        reference="wrong",
        comparator="exact",
        executor="local",
        out=tmp_path / "b",
    )
    rec = result.record
    assert (rec.verdict, rec.culprits) == ("confirmed", [["fact:c"]])
    assert rec.execution.runs_used == program.calls == 12 == len(result.runs)
    assert [(p.ablated, p.cached) for p in rec.probes] == [
        ([], False),
        (["fact:a", "fact:b", "fact:c"], False),
        (["fact:a", "fact:b"], False),
        (["fact:c"], False),
        (["fact:a", "fact:b"], True),
    ]
    data = json.loads((tmp_path / "b" / "bisect.json").read_text())
    assert data["schema_version"] == 10 and data["reference"] == {
        "from": "prior-run",
        "text": "wrong",
    }
    probe = data["probes"][3]
    # "wrong" vs "right": longest common subsequence "rg", Indel distance 10 - 4 = 6, 1 - 6/10.
    assert probe.pop("similarity")["mean"] == pytest.approx(0.4)
    assert probe == {
        "ablated": ["fact:c"],
        "samples": 3,
        "flips": 3,
        "flipped": True,
        "cached": False,
        "speculative": False,
        "p_value": None,  # decide: majority runs no test
        "n10": None,
        "n01": None,
        "decided_early": False,  # bisect.stop_early is off
    }
    lines = (tmp_path / "b" / "runs.jsonl").read_text().splitlines()
    assert len(lines) == 12
    arms = {json.loads(x)["arm"] for x in lines}
    assert arms == {
        "baseline",
        'ablate:["fact:a","fact:b","fact:c"]',
        'ablate:["fact:a","fact:b"]',
        'ablate:["fact:c"]',
    }
    assert "culprit set 1: {fact:c} — ablating exactly this set flipped 3/3" in result.report()


def test_baseline_facets_and_ablations_reach_every_probe() -> None:
    seen: list[tuple[str, ...]] = []

    def runner(ctx: RunContext) -> str:
        seen.append(ctx.arm.ablations)
        assert ctx.arm.facets == {"model": "m1"}
        return "right" if "x" in ctx.arm.ablations else "wrong"

    result = find_culprits(
        ["x", "y"],
        runner,
        baseline={"id": "prod", "facets": {"model": "m1"}, "ablations": ["old"]},
        comparator="exact",
        executor="local",
    )
    assert result.record.culprits == [["x"]]
    assert result.record.reference.from_ == "baseline-arm"
    assert all(a[0] == "old" for a in seen)


def test_suspect_already_ablated_by_baseline_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"bisect\.suspects\[0\]: 'old' is already ablated"):
        find_culprits(
            ["old"], Program(), baseline={"id": "b", "ablations": ["old"]}, executor="local"
        )


def test_duplicate_suspects_refused() -> None:
    with pytest.raises(
        ConfigError,
        match=r"bisect\.suspects\[1\]: ablation id 'a' is already used by bisect\.suspects\[0\]",
    ):
        find_culprits(["a", "a"], Program(), executor="local")


def test_cli_bisect_end_to_end(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path,
        f"name: b\nrunner: {TESTS / 'runners.py'}:needs_two_removed\nreference: wrong\n"
        "comparator: {kind: exact}\nexecutor: {kind: local}\n"
        "bisect: {suspects: [p, x, q, y], max_probes: 12}\n",
    )
    result = CliRunner().invoke(main, ["bisect", str(cfg), "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.stderr
    assert "bisect 'b' on scenario 'default': confirmed (culprits-found)" in result.stdout
    assert "culprit set 1: {x, y}" in result.stdout
    data = json.loads((tmp_path / "o" / "bisect.json").read_text())
    assert data["culprits"] == [["x", "y"]] and data["max_probes"] == 12


def test_a_spend_budget_stops_the_search_and_a_raised_one_resumes_it(tmp_path: Path) -> None:
    # $1 a run, 3 seeds a probe: $10 buys the baseline and two more probes, then the feed
    # refuses the next run; the search is recorded as stopped, never as a claim
    cfg = write_config(
        tmp_path,
        f"name: b\nrunner: {TESTS / 'runners.py'}:needs_two_removed_paid\nreference: wrong\n"
        "comparator: {kind: exact}\nexecutor: {kind: local, concurrency: 1}\nsamples: 3\n"
        "cost_key: usd\nbudget: {usd: 10}\nbisect: {suspects: [p, x, q, y], max_probes: 12}\n",
    )
    out = tmp_path / "o"
    stopped = CliRunner().invoke(main, ["bisect", str(cfg), "--out", str(out), "--no-report"])
    assert stopped.exit_code == 4, stopped.stderr
    assert "budget: budget reached (usd)" in stopped.stderr
    assert "raise budget.usd and run the same command again" in stopped.stderr
    data = json.loads((out / "bisect.json").read_text())
    assert (data["verdict"], data["reason"], data["culprits"]) == (
        "inconclusive",
        "spend-exhausted",
        [],
    )
    assert data["execution"]["status"] == "budget-exhausted"
    assert data["execution"]["budget"]["exhausted"] == ["usd"]
    assert data["execution"]["runs_used"] <= 10
    assert "the spend budget stopped the search" in data["claim"]
    first = data["execution"]["runs_used"]
    more = ["--set", "budget.usd=1000", "--no-report"]
    again = CliRunner().invoke(main, ["bisect", str(cfg), "--out", str(out), *more])
    assert again.exit_code == 0, again.stderr
    data = json.loads((out / "bisect.json").read_text())
    assert data["culprits"] == [["x", "y"]] and data["execution"]["status"] == "complete"
    assert data["execution"]["runs_reused"] >= first  # the runs the $10 bought are read back


def test_cli_bisect_without_section_exits_2(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, f"name: b\nrunner: {TESTS / 'runners.py'}:echo_arm\n")
    result = CliRunner().invoke(main, ["bisect", str(cfg), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "bisect: 'counterfact bisect' needs a 'bisect:' section" in result.stderr
    assert not (tmp_path / "o").exists()


def test_cli_bisect_default_dir_is_name_dash_bisect(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path,
        f"name: b\nrunner: {TESTS / 'runners.py'}:needs_two_removed\noutput_dir: {tmp_path}\n"
        "executor: {kind: local}\nbisect: {suspects: [x]}\n",
    )
    result = CliRunner().invoke(main, ["bisect", str(cfg)])
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "b-bisect" / "bisect.json").is_file()
    assert "not-reproducible" in result.stdout


def test_probe_arm_ids_never_collide() -> None:
    from counterfact.orchestrator.drivers.probing import probe_arm
    from counterfact.probes.arms import ArmSpec

    base = ArmSpec("base", {})
    assert probe_arm(base, ["a+b"]).id != probe_arm(base, ["a", "b"]).id
    assert probe_arm(base, ["b", "a"]).id == probe_arm(base, ["a", "b"]).id == 'ablate:["a","b"]'


def test_find_culprits_resumes_and_uses_the_cache(tmp_path: Path) -> None:
    first = Program()
    kw = {"reference": "wrong", "comparator": "exact", "executor": "local", "runner_version": "1"}
    find_culprits(
        ["fact:a", "fact:b", "fact:c"], first, out=tmp_path / "b", cache_dir=tmp_path / "c", **kw
    )  # type: ignore[arg-type]
    again = Program()
    resumed = find_culprits(["fact:a", "fact:b", "fact:c"], again, out=tmp_path / "b", **kw)  # type: ignore[arg-type]
    assert (
        again.calls == 0
        and resumed.record.execution.runs_used == 0
        and resumed.record.execution.runs_reused == 12
    )
    cached = Program()
    other = find_culprits(
        ["fact:a", "fact:b", "fact:c"], cached, out=tmp_path / "x", cache_dir=tmp_path / "c", **kw
    )  # type: ignore[arg-type]
    assert cached.calls == 0 and other.record.culprits == [["fact:c"]]


def test_run_bisect_names_load_bisect_when_given_a_sweep() -> None:
    from counterfact import run_bisect
    from counterfact.orchestrator.config.loading import validate_config
    from counterfact.orchestrator.config.resolve import resolve_sweep

    raw = {
        "name": "x",
        "runner": "tests.runners:echo_arm",
        "arms": [{"id": "a"}, {"id": "b", "facets": {"m": 1}}],
    }
    sweep = resolve_sweep(validate_config(raw), base_dir=TESTS.parent)
    with pytest.raises(TypeError, match=r"load_bisect\(path\)"):
        run_bisect(sweep, run_dir=None)  # type: ignore[arg-type]


def test_bisect_result_mirrors_sweep_result() -> None:
    # the example in BisectResult's docstring, run as written
    def runner(ctx: RunContext) -> str:
        return "right" if "fact:b" in ctx.arm.ablations else "wrong"

    result = find_culprits(["fact:a", "fact:b"], runner, reference="wrong", executor="local")
    assert (result.verdict, result.culprits) == ("confirmed", [["fact:b"]])
    assert result.reason == "culprits-found" and result.claim == result.record.claim
    assert result.probes[0].ablated == [] and len(result.probes) == len(result.record.probes)
    assert result.table() == result.report() and "culprit set 1: {fact:b}" in result.table()
    frame = result.to_frame()
    assert len(frame) == len(result.probes) and "ablated" in frame.columns
    # the same names as SweepResult: attributes, table(), to_frame(), runs, run_dir
    swept = compare_arms(
        [{"id": "base"}, {"id": "alt", "ablations": ["fact:b"]}],
        runner,
        reference="wrong",
        executor="local",
    )
    for name in ("table", "to_frame", "runs", "run_dir"):
        assert hasattr(result, name) and hasattr(swept, name)


FACETS = "{model: m1, temperature: 0.2}"


def _facet_config(tmp_path: Path, scenario: str = "reference: wrong\n") -> Path:
    """One file for both commands: arms for ``run``, a bisect section for ``bisect``; the
    runner's manifests report ``model`` but not the declared ``temperature``.
    """
    return write_config(
        tmp_path,
        f"name: f\nrunner: {TESTS / 'runners.py'}:reports_model_only\n{scenario}"
        "samples: 3\ncomparator: {kind: exact}\nexecutor: {kind: local}\n"
        f"arms:\n  - {{id: prod, facets: {FACETS}}}\n"
        f"  - {{id: x-off, facets: {FACETS}, ablations: [x]}}\n"
        "bisect: {suspects: [x, y]}\n",
    )


def test_cli_bisect_and_run_withhold_alike_on_an_unreported_facet(tmp_path: Path) -> None:
    # issue 26 item 7: the same file, the same check and the same words in both commands.
    cfg = _facet_config(tmp_path)
    bisected = CliRunner().invoke(main, ["bisect", str(cfg), "--out", str(tmp_path / "b")])
    assert bisected.exit_code == 0, bisected.stderr
    data = json.loads((tmp_path / "b" / "bisect.json").read_text())
    assert (data["verdict"], data["reason"]) == ("inconclusive", "baseline-facet-not-reported")
    assert data["culprits"] == [] and data["probes_executed"] == 1  # stopped after the baseline
    words = (
        "the baseline 'prod' declared temperature=0.2, but its run manifests do not report "
        "`temperature`: report `temperature` in the manifest, or do not declare it."
    )
    assert words in data["claim"] and "no culprit is claimed" in data["claim"]
    (doubt,) = [r for r in data["reasons"] if r["code"] == "facet-not-reported"]
    assert (doubt["count"], doubt["seeds"]) == (3, [0, 1, 2])
    ran = CliRunner().invoke(main, ["run", str(cfg), "--out", str(tmp_path / "r"), "--no-report"])
    assert ran.exit_code == 0, ran.stderr
    rows = [json.loads(x) for x in (tmp_path / "r" / "verdicts.jsonl").read_text().splitlines()]
    (row,) = [r for r in rows if r["arm"] == "x-off"]
    assert (row["verdict"], row["reason"]) == ("inconclusive", "baseline-facet-not-reported")
    assert words in row["claim"]


def test_bisect_on_a_contradicted_facet_does_not_take_effect(tmp_path: Path) -> None:
    scenario = "scenarios: [{id: s, inputs: {manifest_model: m2}, reference: wrong}]\n"
    cfg = _facet_config(tmp_path, scenario)
    result = CliRunner().invoke(main, ["bisect", str(cfg), "--out", str(tmp_path / "b")])
    assert result.exit_code == 0, result.stderr
    data = json.loads((tmp_path / "b" / "bisect.json").read_text())
    assert (data["verdict"], data["reason"]) == ("inconclusive", "baseline-not-applied")
    assert "declared model='m1', but its run manifests reported 'm2'" in data["claim"]
    assert "The baseline did not take effect" in data["claim"] and data["culprits"] == []


def test_a_probe_whose_manifest_drops_a_facet_stops_the_search() -> None:
    # The baseline reports both facets; ablating x loses `temperature` from the manifest: the
    # search stops at that probe, claiming nothing, though ablating x flipped.
    def runner(ctx: RunContext) -> dict[str, object]:
        ablated = "x" in ctx.arm.ablations
        manifest = {"model": "m1"} if ablated else {"model": "m1", "temperature": 0.2}
        return {"output": "right" if ablated else "wrong", "manifest": manifest}

    result = find_culprits(
        ["x", "y"],
        runner,
        baseline={"id": "prod", "facets": {"model": "m1", "temperature": 0.2}},
        reference="wrong",
        comparator="exact",
        executor="local",
    )
    rec = result.record
    assert (rec.verdict, rec.reason, rec.culprits) == (
        "inconclusive",
        "baseline-facet-not-reported",
        [],
    )
    assert [p.ablated for p in rec.probes] == [[], ["x", "y"]]
    (doubt,) = [r for r in rec.reasons if r.code == "facet-not-reported"]
    assert doubt.count == 3 and 'in probe(s) ablate:["x","y"]' in doubt.detail


def test_a_bisection_whose_runs_report_no_manifest_is_unchecked_as_a_row_is() -> None:
    result = find_culprits(
        ["x"],
        lambda ctx: "right" if "x" in ctx.arm.ablations else "wrong",
        baseline={"id": "prod", "facets": {"model": "m1"}},
        reference="wrong",
        comparator="contains",
        executor="local",
    )
    rec = result.record
    assert rec.verdict == "confirmed" and rec.standing == "not-sure"
    assert {r.code for r in rec.reasons} == {"manifest-unchecked"}
