"""API-bound runners on a real Ray instance: worker actors, the shared throttle actor, a worker
killed mid-sweep, bisection and sequential waves with an async runner, SIGTERM and resume.
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

from counterfact import compare_arms, find_culprits

from ..conftest import TESTS, write_config
from ..standin import StandIn

pytestmark = pytest.mark.ray
ARMS = [{"id": "base"}, {"id": "alt", "facets": {"model": "flaky-model"}}]


def _runs(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines() if x.strip()]


def _scenarios(api: StandIn) -> list[dict[str, Any]]:
    return [{"id": "q", "inputs": {"base_url": api.base_url}, "reference": "Paris"}]


@pytest.mark.usefixtures("ray_instance")
@pytest.mark.parametrize("runner", ["io_runners.py:ask_openai", "io_runners.py:ask_httpx"])
def test_runs_overlap_on_worker_actors(runner: str, tmp_path: Path) -> None:
    import ray

    with StandIn(median_s=0.2, p95_s=0.3) as api:
        result = compare_arms(
            ARMS,
            runner,
            base_dir=TESTS,
            samples=40,
            scenarios=_scenarios(api),
            comparator="contains",
            executor={"kind": "ray", "concurrency": 40},
            out=tmp_path / "o",
        )
    runs = _runs(tmp_path / "o")
    assert len(runs) == 80 and all(r["error"] is None for r in runs)
    assert api.stats.peak_in_flight >= 20  # many runs at once on 2 CPUs
    assert {r["node"] for r in runs} == {ray.get_runtime_context().get_node_id()}
    assert result.row("alt").flips == 20
    assert result.summary.concurrency is not None and result.summary.concurrency.configured == 40


@pytest.mark.usefixtures("ray_instance")
def test_one_throttle_for_every_worker_under_429s(tmp_path: Path) -> None:
    with StandIn(median_s=0.05, p95_s=0.1, max_in_flight=6, retry_after=0.05) as api:
        result = compare_arms(
            ARMS,
            "io_runners.py:ask_openai",
            base_dir=TESTS,
            samples=60,
            scenarios=_scenarios(api),
            comparator="contains",
            executor={"kind": "ray", "concurrency": 40},
            out=tmp_path / "o",
        )
    runs = _runs(tmp_path / "o")
    assert len(runs) == 120 and result.summary.runs_failed == 0
    moved = result.summary.concurrency
    assert moved is not None and moved.cuts >= 1 and moved.lowest < 40
    # every worker reported to the one throttle: it saw every refusal the server made
    assert moved.refusals == api.stats.refused == sum(r["rate_limited"] for r in runs) > 0


@pytest.mark.usefixtures("ray_instance")
def test_a_run_that_kills_its_worker_fails_alone(tmp_path: Path) -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        "io_runners.py:dies_on_one_seed",
        base_dir=TESTS,
        samples=8,
        reference="yes",
        executor={"kind": "ray", "concurrency": 8, "infra_retries": 1},
        out=tmp_path / "o",
    )
    runs = _runs(tmp_path / "o")
    failed = [(r["arm"], r["seed"]) for r in runs if r["error"] is not None]
    assert len(runs) == 16 and failed == [("alt", 3)]
    # runs that shared the dead actor were run again alone, and say so
    assert any(r["infra_retries"] >= 1 and r["error"] is None for r in runs)
    assert result.summary.runs_failed == 1


@pytest.mark.usefixtures("ray_instance")
def test_bisection_with_an_async_runner_on_ray() -> None:
    result = find_culprits(
        ["a", "b", "c", "d"],
        "io_runners.py:async_culprit",
        base_dir=TESTS,
        samples=3,
        reference="wrong",  # what the baseline answers; ablating the culprit flips it
        inputs={"culprit": "c"},
        comparator="exact",
        executor={"kind": "ray", "concurrency": 16},
    )
    assert result.record.verdict == "confirmed" and result.record.culprits == [["c"]]


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


def test_sigterm_cancels_in_flight_runs_and_the_resume_runs_them(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path,
        "name: t\nrunner: " + str(TESTS / "io_runners.py") + ":sleepy\nsamples: 100\n"
        "scenarios: [{id: s, inputs: {sleep_s: 0.3, slow_s: 0.3}, reference: 'yes'}]\n"
        "comparator: {kind: exact}\nexecutor: {kind: local, concurrency: 20}\n"
        "arms: [{id: base}, {id: alt, facets: {x: 1}}]\n",
    )
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "counterfact.orchestrator.cli", "run", str(cfg), "--out", str(out)]
    driver = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (out / "runs.jsonl").exists() and len(_runs(out)) >= 40:
            break
        time.sleep(0.02)
    driver.send_signal(signal.SIGTERM)
    _, err = driver.communicate(timeout=60)
    assert driver.returncode == 130, err.decode()
    stopped = _runs(out)
    assert 40 <= len(stopped) < 200
    assert all(r["error"] is None for r in stopped)  # cancelled runs are not recorded as failed
    assert json.loads((out / "summary.json").read_text())["status"] == "interrupted"
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
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["budget"]["limits"] == {"usd": 2.0} and summary["budget"]["spent"]["usd"] > 0
    assert api.stats.served == 20
