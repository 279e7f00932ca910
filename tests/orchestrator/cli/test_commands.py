"""The CLI end to end on the in-process executor."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ...conftest import TESTS, write_config
from ...helpers import invoke

ROOT = TESTS.parent
QUICKSTART = ROOT / "configs" / "quickstart.yaml"


def test_version() -> None:
    code, out, _ = invoke("--version")
    assert code == 0 and out.startswith("counterfact, version ")


def test_quickstart_locally_shows_the_three_verdicts(tmp_path: Path) -> None:
    out_dir = tmp_path / "qs"
    code, out, err = invoke("run", str(QUICKSTART), "--executor", "local", "--out", str(out_dir))
    assert code == 0, err
    rows = {line.split()[0]: line.split() for line in out.splitlines()[2:6]}
    assert rows["baseline"][1:3] == ["baseline", "0/8"]
    assert rows["stale-index"][1] == "confirmed" and rows["stale-index"][4] == "majority-flip"
    assert rows["large-model"][1] == "not-confirmed" and rows["large-model"][4] == "no-flip"
    assert rows["rerank"][1] == "inconclusive" and rows["rerank"][4] == "arm-not-applied"
    # 8 of 8 discordant seeds: p = 1/256; Holm over the 2 tested challengers (rerank did not
    # take effect, so it has no test): 2/256 = 0.0078 (exact)
    assert rows["stale-index"][5:] == ["significant", "p=0.0078", "not-sure", "(1)"]
    assert rows["rerank"][5:] == ["not-sure", "(3)"]  # inconclusive: never sure (rule 25)
    runs = [json.loads(line) for line in (out_dir / "runs.jsonl").read_text().splitlines()]
    assert len(runs) == 32
    assert {(r["arm"], r["seed"]) for r in runs} == {
        (a, s) for a in ("baseline", "stale-index", "large-model", "rerank") for s in range(8)
    }
    assert set(runs[0]) == {
        "schema_version",
        "scenario",
        "arm",
        "seed",
        "runner_seed",
        "output",
        "manifest",
        "cost",
        "error",
        "duration_s",
        "finished_at",
        "attempts",
        "from_cache",
        "infra_retries",
        "infra_error",
        "rate_limited",
        "rate_limited_s",
        "text_escaped",
        "node",
    }
    assert {r["node"] for r in runs} == {"local"}
    verdicts = [json.loads(line) for line in (out_dir / "verdicts.jsonl").read_text().splitlines()]
    assert [v["arm"] for v in verdicts] == ["baseline", "stale-index", "large-model", "rerank"]
    rerank = verdicts[3]
    assert rerank["application"]["mismatches"] == [
        {"facet": "retrieval", "declared": "rerank", "observed": "bm25"}
    ]
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["schema_version"] == 10 and summary["execution"]["runs_used"] == 32
    assert summary["scenarios"][0]["reference"] == {
        "from": "prior-run",
        "text": "The capital of Australia is Canberra.",
    }
    assert summary["scenarios"][0]["null_band"]["gates"] is True
    assert summary["config"]["executor"]["kind"] == "local"
    assert "--executor local" in summary["overrides"]


def _readme_output(path: Path) -> str:
    """The quickstart's output as a page shows it: the code block that starts with the table."""
    text = path.read_text(encoding="utf-8")
    found = re.search(r"\n```\n(arm +verdict .*?\n)```\n", text, re.S)
    assert found is not None, path
    return found.group(1)


def test_the_readme_shows_what_its_command_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The README's command names its run directory runs/quickstart-$(date +%Y%m%d-%H%M%S); its
    # output block once said runs/quickstart/. Run it (in-process: the output is the same as on
    # Ray) into the directory the block names, and compare every line.
    shown = _readme_output(ROOT / "README.md")
    assert shown == _readme_output(ROOT / "docs" / "tutorial.md")
    (run_dir,) = re.findall(r"^records: (runs/quickstart-\d{8}-\d{6})/ ", shown, re.M)
    assert '--out "runs/quickstart-$(date +%Y%m%d-%H%M%S)"' in (ROOT / "README.md").read_text()
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke("run", str(QUICKSTART), "--executor", "local", "--out", run_dir)
    assert code == 0, err
    assert out == shown


def test_default_run_dir_is_output_dir_slash_name(tmp_path: Path, monkeypatch: object) -> None:
    cfg = write_config(
        tmp_path,
        f"name: mine\nrunner: {TESTS / 'runners.py'}:echo_arm\noutput_dir: {tmp_path / 'out'}\n"
        "executor: {kind: local}\narms: [{id: a}, {id: b, facets: {answer: nope}}]\n",
    )
    code, _out, err = invoke("run", str(cfg))
    assert code == 0, err
    assert (tmp_path / "out" / "mine" / "verdicts.jsonl").is_file()


def test_rerun_resumes_and_executes_nothing(tmp_path: Path) -> None:
    out_dir = tmp_path / "qs"
    assert invoke("run", str(QUICKSTART), "--executor", "local", "--out", str(out_dir))[0] == 0
    before = (out_dir / "runs.jsonl").read_bytes()
    verdicts = (out_dir / "verdicts.jsonl").read_text()
    code, _out, err = invoke("run", str(QUICKSTART), "--executor", "local", "--out", str(out_dir))
    assert code == 0, err
    assert "resumed: 32 runs read back, 0 from the cache, 0 run now" in err
    assert (out_dir / "runs.jsonl").read_bytes() == before
    assert (out_dir / "verdicts.jsonl").read_text() == verdicts


def test_changed_arm_refuses_resume_and_keeps_records(tmp_path: Path) -> None:
    out_dir = tmp_path / "qs"
    assert invoke("run", str(QUICKSTART), "--executor", "local", "--out", str(out_dir))[0] == 0
    before = (out_dir / "runs.jsonl").read_bytes()
    code, out, err = invoke(
        "run",
        str(QUICKSTART),
        "--executor",
        "local",
        "--out",
        str(out_dir),
        "--set",
        "arms.2.facets.model=huge",
    )
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.startswith("error: cannot resume")
    assert 'arms[large-model].facets.model: "large" → "huge"' in err
    assert "--fresh --cache DIR" in err and "--out NEW_DIR" in err
    assert (out_dir / "runs.jsonl").read_bytes() == before


def test_fresh_moves_the_old_directory_aside(tmp_path: Path) -> None:
    out_dir = tmp_path / "qs"
    assert invoke("run", str(QUICKSTART), "--executor", "local", "--out", str(out_dir))[0] == 0
    code, _, err = invoke(
        "run",
        str(QUICKSTART),
        "--executor",
        "local",
        "--out",
        str(out_dir),
        "--fresh",
        "--set",
        "arms.2.facets.model=huge",
    )
    assert code == 0, err
    moved = [p for p in tmp_path.iterdir() if p.name.startswith("qs.moved-")]
    assert len(moved) == 1 and (moved[0] / "runs.jsonl").is_file()
    assert len((out_dir / "runs.jsonl").read_text().splitlines()) == 32


def test_bad_config_exits_2_and_creates_no_run_dir(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path, f"name: x\nrunner: {TESTS / 'runners.py'}:echo_arm\narms: [{{id: a}}]\n"
    )
    out_dir = tmp_path / "never"
    code, _, err = invoke("run", str(cfg), "--executor", "local", "--out", str(out_dir))
    assert code == 2
    assert err.strip() == (
        "error: arms: a sweep needs at least two arms (a baseline and a challenger), got 1; "
        "add an arm that declares facets, ablations or restorations"
    )
    assert not out_dir.exists()


def test_validate_runs_nothing(tmp_path: Path) -> None:
    out_dir = tmp_path / "v"
    code, out, err = invoke(
        "validate", str(QUICKSTART), "--out", str(out_dir), "--set", "samples=4"
    )
    assert code == 0, err
    assert "4 arms (baseline 'baseline'), 1 scenario(s), 4 samples -> 16 runs" in out
    assert not out_dir.exists()


def test_validate_reports_bad_set(tmp_path: Path) -> None:
    code, _, err = invoke("validate", str(QUICKSTART), "--set", "samples=1")
    assert code == 2 and "samples must be at least 2" in err


def test_unknown_executor_is_a_usage_error() -> None:
    code, _, err = invoke("run", str(QUICKSTART), "--executor", "slurm")
    assert code == 2 and "'slurm' is not one of 'local', 'ray'" in err


def test_failed_runs_are_recorded_and_reported(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path,
        f"name: f\nrunner: {TESTS / 'runners.py'}:fails_on_odd_seeds\nsamples: 3\n"
        "executor: {kind: local}\narms: [{id: a}, {id: b, facets: {x: 1}}]\n",
    )
    code, out, err = invoke("run", str(cfg), "--out", str(tmp_path / "o"))
    assert code == 0, err
    assert "inconclusive" in out and "runs-failed" in out and "(1 failed)" in out
    runs = [json.loads(x) for x in (tmp_path / "o" / "runs.jsonl").read_text().splitlines()]
    failed = [r for r in runs if r["error"]]
    assert {(r["arm"], r["seed"]) for r in failed} == {("a", 1), ("b", 1)}
    error = failed[0]["error"]
    assert (error["type"], error["message"]) == ("RuntimeError", "seed 1 failed")
    # the traceback ends where the runner raised, and is bounded
    assert "fails_on_odd_seeds" in error["traceback"] and len(error["traceback"]) <= 4096
    assert error["traceback"].rstrip().endswith("RuntimeError: seed 1 failed")
    assert failed[0]["output"] is None


def test_runner_return_error_is_recorded(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path,
        f"name: f\nrunner: {TESTS / 'runners.py'}:not_a_string\n"
        "executor: {kind: local}\narms: [{id: a}, {id: b, facets: {x: 1}}]\n",
    )
    code, _, err = invoke("run", str(cfg), "--out", str(tmp_path / "o"))
    # a contract error is the same on every run: scheduling stops after 3, which are kept
    assert code == 1, err
    # (two arms: their first runs failed alike, so it stopped after 2)
    assert "stopped after 2 runs: the first run of every arm on every scenario (2) failed" in err
    assert "RunnerReturnError" in err and "--fresh" in err
    lines = (tmp_path / "o" / "runs.jsonl").read_text().splitlines()
    assert len(lines) == 2
    first = json.loads(lines[0])
    assert first["error"]["type"] == "RunnerReturnError"
    assert "runner returned int" in first["error"]["message"]
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert (
        summary["execution"]["status"] == "failed"
        and "same error" in summary["execution"]["failure"]
    )


def test_validate_reports_what_a_resume_would_do(tmp_path: Path) -> None:
    out_dir = tmp_path / "qs"
    assert invoke("run", str(QUICKSTART), "--executor", "local", "--out", str(out_dir))[0] == 0
    code, out, err = invoke(
        "validate", str(QUICKSTART), "--out", str(out_dir), "--set", "samples=10"
    )
    assert code == 0, err
    assert "holds 32 recorded runs; run would resume them and execute 8 more" in out
    code, out, err = invoke(
        "validate", str(QUICKSTART), "--out", str(out_dir), "--set", "samples=2"
    )
    assert code == 0, err  # records past the plan do not count as planned runs done
    assert "holds 32 recorded runs; run would resume them and execute 0 more" in out


def test_a_degenerate_band_is_one_json_log_event_not_a_raw_warning(tmp_path: Path) -> None:
    import subprocess
    import sys

    cfg = write_config(
        tmp_path,
        f"name: d\nrunner: {TESTS / 'runners.py'}:echo_arm\nreference: 'yes'\n"
        "executor: {kind: local}\narms: [{id: base}, {id: alt, facets: {answer: 'yes'}}]\n",
    )
    out = ("--out", str(tmp_path / "o"))
    done = subprocess.run(
        [sys.executable, "-m", "counterfact.orchestrator.cli", "run", str(cfg), *out],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stderr.splitlines()]  # every line is JSON
    (band,) = [e for e in events if e["event"] == "band.degenerate"]
    assert band["category"] == "DegenerateBandWarning" and band["level"] == "warning"


def test_validate_notes_a_facet_the_baseline_does_not_declare(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path,
        f"name: g\nrunner: {TESTS / 'runners.py'}:echo_arm\nexecutor: local\n"
        "arms: [{id: base, facets: {model: small}}]\ngrid: {modle: [large]}\n",
    )
    code, out, err = invoke("validate", str(cfg), "--out", str(tmp_path / "o"))
    assert code == 0, err
    assert (
        "sets facet 'modle', which the baseline 'base' does not declare; did you mean 'model'?"
        in out
    )


def test_executor_local_flag_drops_ray_only_keys_with_a_note(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path,
        f"name: g\nrunner: {TESTS / 'runners.py'}:echo_arm\nreference: 'yes'\n"
        "executor: {kind: ray, num_cpus: 4, timeout_s: 5}\n"
        "arms: [{id: base}, {id: alt, facets: {answer: 'no'}}]\n",
    )
    code, out, err = invoke("run", str(cfg), "--executor", "local", "--out", str(tmp_path / "o"))
    assert code == 0, err
    assert (
        "note: --executor local: ignoring executor.num_cpus, executor.timeout_s (ray only)" in out
    )


def test_validate_smoke_runs_one_seed_per_arm_and_fails_on_a_broken_runner(tmp_path: Path) -> None:
    good = write_config(
        tmp_path,
        f"name: g\nrunner: {TESTS / 'runners.py'}:echo_arm\n"
        "arms: [{id: base}, {id: alt, facets: {answer: 'no'}}]\n",
    )
    code, out, err = invoke("validate", str(good), "--smoke", "--out", str(tmp_path / "o"))
    assert code == 0, err
    assert "smoke: arm 'base': ok" in out and "smoke: arm 'alt': ok" in out and "'no'" in out
    assert not (tmp_path / "o").exists()  # nothing written
    bad = write_config(
        tmp_path,
        f"name: b\nrunner: {TESTS / 'runners.py'}:not_a_string\n"
        "arms: [{id: base}, {id: alt, facets: {x: 1}}]\n",
        "bad.yaml",
    )
    code, out, err = invoke("validate", str(bad), "--smoke", "--out", str(tmp_path / "b"))
    assert code == 1
    assert "smoke: arm 'base': RunnerReturnError: runner returned int" in out
    assert "2 arm(s) failed" in err


def test_nothing_left_to_run_starts_no_ray(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = f"""
import sys
from counterfact import compare_arms
arms = [{{"id": "base"}}, {{"id": "alt", "facets": {{"answer": "no"}}}}]
kw = dict(reference="yes", out={str(tmp_path / "o")!r}, base_dir={str(TESTS)!r})
compare_arms(arms, "runners.py:echo_arm", executor="local", **kw)
compare_arms(arms, "runners.py:echo_arm", executor="ray", **kw)  # all recorded: a resume
print("ray" in sys.modules and sys.modules["ray"].is_initialized())
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "False", done.stderr


def test_validate_bisect_smoke_tries_every_suspect_ablated(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path,
        f"name: b\nrunner: {TESTS / 'runners.py'}:needs_two_removed\nreference: wrong\n"
        "executor: local\nbisect: {suspects: [x, y]}\n",
    )
    code, out, err = invoke(
        "validate", str(cfg), "--bisect", "--smoke", "--out", str(tmp_path / "o")
    )
    assert code == 0, err
    assert "smoke: arm 'baseline': ok" in out
    assert """smoke: arm 'ablate:["x","y"]': ok""" in out and "'right'" in out


def test_a_directory_with_poisoned_costs_resumes_reports_and_exports(tmp_path: Path) -> None:
    """A reply whose usage said 1e308 tokens, summed, made every total infinite: the resume,
    ``report`` and ``export`` of that directory failed from then on (issue 45 item 3)."""
    from ...records.test_files import poison

    run_dir = tmp_path / "o"
    assert invoke("run", str(QUICKSTART), "--executor", "local", "--out", str(run_dir))[0] == 0
    poison(run_dir / "runs.jsonl", "1e308")  # 31 of its 32 runs
    code, out, err = invoke("run", str(QUICKSTART), "--executor", "local", "--out", str(run_dir))
    assert code == 0, err
    assert "31 run(s) recorded a cost no run can spend" in out
    summary = json.loads((run_dir / "summary.json").read_text())
    assert (
        summary["execution"]["spend"]["total"]["usd"] == 15.5
        and summary["execution"]["spend"]["runs_cost_refused"] == 31
    )
    assert "Infinity" not in (run_dir / "verdicts.jsonl").read_text()
    assert invoke("report", str(run_dir))[0] == 0
    assert invoke("export", str(run_dir), "--format", "csv")[0] == 0
