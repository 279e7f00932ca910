"""API-bound runners: async and threaded runs overlap, 429s never fail a run, budgets stop a
sweep — against a real HTTP server on loopback, through the real openai and httpx clients.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from counterfact import BudgetExhausted, RunsFailed, compare_arms, find_culprits

from ..conftest import TESTS, write_config
from ..helpers import invoke
from ..standin import StandIn

ARMS = [{"id": "base"}, {"id": "alt", "facets": {"model": "flaky-model"}}]


def _scenarios(api: StandIn, **extra: Any) -> list[dict[str, Any]]:
    return [{"id": "q", "inputs": {"base_url": api.base_url, **extra}, "reference": "Paris"}]


def _runs(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("runner", ["io_runners.py:ask_openai", "io_runners.py:ask_httpx"])
def test_runs_overlap_in_process_and_the_verdicts_hold(runner: str, tmp_path: Path) -> None:
    with StandIn(median_s=0.2, p95_s=0.3) as api:
        result = compare_arms(
            ARMS,
            runner,
            base_dir=TESTS,
            samples=20,
            scenarios=_scenarios(api),
            comparator="contains",
            executor={"kind": "local", "concurrency": 40},
            out=tmp_path / "o",
        )
    # the overlap is measured at the server, not by a wall clock a loaded machine stretches
    assert api.stats.served == 40 and api.stats.peak_in_flight >= 20
    assert result.row("alt").flips == 10 and result.row("alt").verdict == "inconclusive"
    assert all(r["error"] is None and r["node"] == "local" for r in _runs(tmp_path / "o"))


def test_429s_are_waited_out_and_cut_the_concurrency(tmp_path: Path) -> None:
    with StandIn(median_s=0.05, p95_s=0.1, max_in_flight=5, retry_after=0.05) as api:
        result = compare_arms(
            ARMS,
            "io_runners.py:ask_openai",
            base_dir=TESTS,
            samples=60,
            scenarios=_scenarios(api),
            comparator="contains",
            executor={"kind": "local", "concurrency": 30},
            out=tmp_path / "o",
        )
    runs = _runs(tmp_path / "o")
    assert len(runs) == 120 and all(r["error"] is None for r in runs)
    assert all(r["attempts"] == 1 for r in runs)  # a refusal is not an attempt
    assert sum(r["rate_limited"] for r in runs) == api.stats.refused > 0
    moved = result.summary.execution.concurrency
    assert moved is not None and moved.configured == 30 and moved.cuts >= 1
    assert moved.lowest < 30 and moved.refusals == api.stats.refused
    assert result.summary.execution.runs_failed == 0 and result.row("alt").flips == 30


def test_rate_limited_raised_by_a_runner_is_retried_not_failed(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        "io_runners.py:refuses_first",
        base_dir=TESTS,
        samples=4,
        scenarios=[{"id": "q", "inputs": {"marks": str(marks)}, "reference": "yes"}],
        executor="local",
        out=tmp_path / "o",
    )
    runs = _runs(tmp_path / "o")
    assert [r["rate_limited"] for r in runs] == [
        1
    ] * 8 and result.summary.execution.runs_failed == 0
    assert all(0 < r["rate_limited_s"] < 1 for r in runs)


def test_a_run_refused_past_max_wait_s_fails_naming_the_limit(tmp_path: Path) -> None:
    with StandIn(max_in_flight=0, retry_after=0.05) as api, pytest.raises(RunsFailed) as caught:
        compare_arms(
            [*ARMS[:1], {"id": "alt", "facets": {"model": "x"}}],
            "io_runners.py:ask_httpx",
            base_dir=TESTS,
            samples=2,
            scenarios=_scenarios(api),
            executor={"kind": "local", "concurrency": 4, "rate_limit": {"max_wait_s": 0.2}},
            out=tmp_path / "o",
        )
    # every arm's first run failed the same way: the failure watch stops the sweep (exit 1)
    assert "max_wait_s" in str(caught.value)
    runs = _runs(tmp_path / "o")
    assert runs and all(r["error"]["type"] == "HTTPStatusError" for r in runs)
    assert all("max_wait_s" in r["error"]["message"] and r["rate_limited"] >= 4 for r in runs)


def test_timeout_cancels_an_async_run_and_the_others_finish(tmp_path: Path) -> None:
    started = time.monotonic()
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        "io_runners.py:sleepy",
        base_dir=TESTS,
        samples=5,
        scenarios=[{"id": "q", "inputs": {"slow_s": 30}, "reference": "yes"}],
        executor={"kind": "local", "concurrency": 10, "timeout_s": 0.5},
        out=tmp_path / "o",
    )
    assert time.monotonic() - started < 15
    failed = [r for r in _runs(tmp_path / "o") if r["error"] is not None]
    assert [(r["arm"], r["seed"], r["error"]["type"]) for r in failed] == [("alt", 0, "RunTimeout")]
    assert "cancelled" in failed[0]["error"]["message"]
    assert result.summary.execution.runs_failed == 1


def test_requests_per_minute_paces_the_whole_sweep(tmp_path: Path) -> None:
    with StandIn(median_s=0.01, p95_s=0.02) as api:
        started = time.monotonic()
        compare_arms(
            ARMS,
            "io_runners.py:ask_openai",
            base_dir=TESTS,
            samples=5,
            scenarios=_scenarios(api),
            comparator="contains",
            executor={
                "kind": "local",
                "concurrency": 10,
                "rate_limit": {"requests_per_minute": 120},
            },
            out=tmp_path / "o",
        )
        wall = time.monotonic() - started
    # 120 per minute is 2 per second; the bucket starts with 1 token: the 9 requests after the
    # first start over at least 9 / 2 = 4.5 s although 10 may be in flight at once
    assert api.stats.served == 10 and 3.8 <= wall < 15


def test_a_budget_stops_the_sweep_and_a_raised_one_resumes_it(tmp_path: Path) -> None:
    out = tmp_path / "o"
    with StandIn(median_s=0.02, p95_s=0.04) as api:
        kwargs: dict[str, Any] = {
            "base_dir": TESTS,
            "samples": 10,
            "scenarios": _scenarios(api),
            "comparator": "contains",
            "executor": {"kind": "local", "concurrency": 4},
            "out": out,
        }
        with pytest.raises(BudgetExhausted, match=r"budget\.usd") as caught:
            compare_arms(ARMS, "io_runners.py:ask_httpx", budget={"usd": 0.1}, **kwargs)
        first = _runs(out)
        # each run costs 0.01: at most 10 runs fit; up to 4 may have started blind at once
        assert 10 <= len(first) <= 10 + 4 - 1 and caught.value.recorded == len(first)
        summary = json.loads((out / "summary.json").read_text())
        assert summary["execution"]["status"] == "budget-exhausted"
        assert summary["execution"]["budget"]["exhausted"] == ["usd"]
        assert summary["execution"]["budget"]["runs_not_started"] == 20 - len(first)
        result = compare_arms(ARMS, "io_runners.py:ask_httpx", budget={"usd": 1.0}, **kwargs)
    runs = _runs(out)
    assert len(runs) == 20 == len({(r["arm"], r["seed"]) for r in runs})  # nothing ran twice
    assert (
        result.summary.execution.status == "complete"
        and result.summary.execution.runs_reused == len(first)
    )
    assert api.stats.served == 20


def _budget_config(folder: Path, api: StandIn, usd: float) -> Path:
    return write_config(
        folder,
        f"name: b\nrunner: {TESTS / 'io_runners.py'}:ask_openai\nsamples: 10\n"
        f"scenarios: [{{id: q, inputs: {{base_url: '{api.base_url}'}}, reference: Paris}}]\n"
        "comparator: contains\nexecutor: {kind: local, concurrency: 2}\n"
        f"budget: {{usd: {usd}}}\n"
        "arms: [{id: base}, {id: alt, facets: {model: flaky-model}}]\n",
    )


def test_cli_exits_4_at_the_budget_and_says_how_to_continue(tmp_path: Path) -> None:
    out = tmp_path / "o"
    with StandIn(median_s=0.01, p95_s=0.02) as api:
        cfg = _budget_config(tmp_path, api, 0.05)
        code, stdout, err = invoke("run", str(cfg), "--out", str(out), "--no-report")
        assert code == 4, err
        assert "budget.usd" in err and "--set budget.usd=" in err and "nothing runs twice" in err
        assert "records:" in stdout  # what ran was judged and shown
        code, _, err = invoke(
            "run", str(cfg), "--out", str(out), "--no-report", "--set", "budget.usd=1"
        )
    assert code == 0, err
    assert len(_runs(out)) == 20


def test_validate_smoke_estimates_spend_and_wall_time(tmp_path: Path) -> None:
    with StandIn(median_s=0.01, p95_s=0.02) as api:
        cfg = _budget_config(tmp_path, api, 0.05)
        code, out, err = invoke("validate", str(cfg), "--smoke", "--out", str(tmp_path / "o"))
    assert code == 0, err
    # 20 runs to go at 0.01 usd each (io_runners reports a fixed 0.01 per run)
    assert "estimate for the runs to go: 20 runs: tokens 60, usd 0.20;" in out
    assert "2.0 run(s) in flight (configured)" in out
    assert "budget.usd=0.05 is below the estimate" in out


def test_sequential_waves_with_an_async_runner_in_process() -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        "io_runners.py:async_answer",
        base_dir=TESTS,
        samples=4,
        reference="yes",
        comparator="exact",
        sequential={"max_samples": 40},
        executor={"kind": "local", "concurrency": 8},
    )
    alt = result.row("alt")
    assert alt.verdict == "confirmed" and alt.sequential is not None
    assert alt.sequential.seeds_used < 40  # stopped early: waves ran through the event loop


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_cancels_in_flight_runs_and_the_resume_runs_them(
    tmp_path: Path, signum: int, code: int
) -> None:
    # SIGTERM (kill, ray job stop, Slurm, CI) and SIGHUP (a closed terminal) stop like Ctrl-C;
    # the exit code is 128 + the signal, as a shell reports it. Seeds 20 and up wait for a
    # gate file, so the signal always finds runs in flight, however loaded the machine is.
    gate = tmp_path / "gate"
    cfg = write_config(
        tmp_path,
        "name: t\nrunner: " + str(TESTS / "io_runners.py") + ":gated\nsamples: 100\n"
        f"scenarios: [{{id: s, inputs: {{open: 20, gate: '{gate}'}}, reference: 'yes'}}]\n"
        "comparator: {kind: exact}\nexecutor: {kind: local, concurrency: 20}\n"
        "arms: [{id: base}, {id: alt, facets: {x: 1}}]\n",
    )
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "counterfact.orchestrator.cli", "run", str(cfg), "--out", str(out)]
    # a shell under nohup (or a CI runner) passes SIGHUP on as ignored: the driver must get the
    # default disposition, as from a terminal, for the signal to mean anything
    driver = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (out / "runs.jsonl").exists() and len(_runs(out)) >= 40:
            break
        time.sleep(0.02)
    driver.send_signal(signum)
    try:
        _, err = driver.communicate(timeout=60)
    finally:
        if driver.poll() is None:  # it ignored the signal: stop the process this test started
            driver.kill()
            driver.communicate()
    assert driver.returncode == code, err.decode()
    assert "run the same command again to resume: counterfact run" in err.decode()
    stopped = _runs(out)
    assert 40 <= len(stopped) < 200
    assert all(r["error"] is None for r in stopped)  # cancelled runs are not recorded as failed
    assert json.loads((out / "summary.json").read_text())["execution"]["status"] == "interrupted"
    gate.touch()
    resumed = subprocess.run(cmd, capture_output=True, timeout=120, check=False)
    assert resumed.returncode == 0, resumed.stderr.decode()
    after = [(r["arm"], r["seed"]) for r in _runs(out)]
    assert len(after) == len(set(after)) == 200


def test_openai_example_config_runs_against_the_stand_in(tmp_path: Path) -> None:
    config = TESTS.parent / "configs" / "openai_agent.yaml"
    with StandIn(median_s=0.02, p95_s=0.05) as api:
        env = {**os.environ, "OPENAI_BASE_URL": api.base_url, "OPENAI_API_KEY": "test"}
        cmd = [
            sys.executable,
            "-m",
            "counterfact.orchestrator.cli",
            "run",
            str(config),
            "--executor",
            "local",
            "--out",
            str(tmp_path / "o"),
            "--no-report",
        ]
        done = subprocess.run(cmd, capture_output=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()
    runs = _runs(tmp_path / "o")
    assert len(runs) == 20 and all(r["error"] is None for r in runs)
    assert {r["manifest"]["model"] for r in runs} == {"gpt-4o", "gpt-4o-mini"}
    assert {r["manifest"]["temperature"] for r in runs} == {0.7}  # every declared facet
    rows = [json.loads(x) for x in (tmp_path / "o" / "verdicts.jsonl").read_text().splitlines()]
    assert all(r["application"]["applied"] for r in rows)  # so no row is withheld for it
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert (
        summary["execution"]["budget"]["limits"] == {"usd": 2.0}
        and summary["execution"]["budget"]["spent"]["usd"] > 0
    )
    assert api.stats.served == 20


def test_a_runner_cancelled_from_inside_is_recorded_as_failed(tmp_path: Path) -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        "io_runners.py:cancels_itself",
        base_dir=TESTS,
        samples=3,
        reference="yes",
        executor={"kind": "local", "concurrency": 4},
        out=tmp_path / "o",
    )
    failed = [r for r in _runs(tmp_path / "o") if r["error"] is not None]
    assert [(r["arm"], r["seed"], r["error"]["type"]) for r in failed] == [
        ("alt", 1, "RunCancelled")
    ]
    assert result.summary.execution.runs_failed == 1


def test_a_loop_bound_client_survives_bisection_probes_and_the_smoke_runs(tmp_path: Path) -> None:
    with StandIn(median_s=0.01, p95_s=0.02) as api:
        result = find_culprits(
            ["a", "b", "c"],
            "io_runners.py:cached_client",
            base_dir=TESTS,
            samples=2,
            inputs={"base_url": api.base_url, "culprit": "b"},
            comparator="exact",
            executor={"kind": "local", "concurrency": 4},
        )
        assert result.record.verdict == "confirmed" and result.record.culprits == [["b"]]
        cfg = write_config(
            tmp_path,
            f"name: s\nrunner: {TESTS / 'io_runners.py'}:cached_client\nsamples: 2\n"
            f"scenarios: [{{id: q, inputs: {{base_url: '{api.base_url}', culprit: b}}}}]\n"
            "comparator: exact\nexecutor: {kind: local, concurrency: 2}\n"
            "arms: [{id: base}, {id: alt, ablations: [b]}]\n",
        )
        code, out, err = invoke("validate", str(cfg), "--smoke", "--out", str(tmp_path / "o"))
    assert code == 0, out + err
    assert out.count(": ok (") == 2
