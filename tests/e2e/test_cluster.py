"""Multi-node for real, on one two-node cluster shared by this module's tests (it is started
once: about 25 s on this machine): a sweep submitted with ``ray job submit``, a join without the
token, and a job stopped mid-sweep then resubmitted. The tests that kill a node have their own
clusters (``test_cluster_kill.py``).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster import CLI, RAY, TwoNodes, records, sweep_dir, two_node_cluster

pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def two_nodes() -> Iterator[TwoNodes]:
    with two_node_cluster() as cluster:
        yield cluster


def test_a_sweep_submitted_as_a_job_runs_on_both_nodes(two_nodes: TwoNodes, tmp_path: Path) -> None:
    work, out = sweep_dir(tmp_path, samples=40, sleep_s=0.05), tmp_path / "out"
    submit = [RAY, "job", "submit", "--address", two_nodes.dashboard, "--working-dir", str(work)]
    done = subprocess.run(
        [*submit, "--", *CLI, "run", "sweep.yaml", "--address", "auto", "--out", str(out)],
        env=two_nodes.env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    runs = records(out)
    keys = [(r["arm"], r["seed"]) for r in runs]
    assert len(keys) == len(set(keys)) == 80 and all(r["error"] is None for r in runs)
    assert len(Counter(r["node"] for r in runs)) == 2  # both nodes ran some
    verdicts = [json.loads(x) for x in (out / "verdicts.jsonl").read_text().splitlines()]
    assert [v["verdict"] for v in verdicts] == [None, "confirmed"]


def test_joining_without_the_token_says_so(two_nodes: TwoNodes, tmp_path: Path) -> None:
    work = sweep_dir(tmp_path, samples=2, sleep_s=0.0)
    env = {k: v for k, v in two_nodes.env.items() if not k.startswith("RAY_AUTH")}
    env["HOME"] = str(tmp_path)  # no ~/.ray/auth_token either
    done = subprocess.run(
        [*CLI, "run", str(work / "sweep.yaml"), "--address", two_nodes.gcs, "--out", "o"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1
    assert "token authentication" in done.stderr and "RAY_AUTH_MODE=token" in done.stderr


def test_a_stopped_job_resubmitted_resumes_without_rerunning(
    two_nodes: TwoNodes, tmp_path: Path
) -> None:
    work, out = sweep_dir(tmp_path, samples=60, sleep_s=0.1), tmp_path / "out"
    sweep = [*CLI, "run", "sweep.yaml", "--address", "auto", "--out", str(out)]
    job = [RAY, "job", "submit", "--address", two_nodes.dashboard, "--working-dir", str(work)]

    def submit(job_id: str, *extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*job, "--submission-id", job_id, *extra, "--", *sweep],
            env=two_nodes.env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    assert submit("cf-first", "--no-wait").returncode == 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if (out / "runs.jsonl").exists() and len(records(out)) >= 20:
            break
        time.sleep(0.2)
    stop = subprocess.run(
        [RAY, "job", "stop", "cf-first", "--address", two_nodes.dashboard],
        env=two_nodes.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert stop.returncode == 0, stop.stderr[-2000:]
    before = {(r["arm"], r["seed"]) for r in records(out)}
    assert 20 <= len(before) < 120, "the stop must land mid-sweep"
    # ray job stop sends SIGTERM: the driver stops as on Ctrl-C and records that it did
    assert json.loads((out / "summary.json").read_text())["status"] == "interrupted"
    again = submit("cf-second")
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    runs = records(out)
    keys = [(r["arm"], r["seed"]) for r in runs]
    assert len(keys) == len(set(keys)) == 120  # every run exactly once across both jobs
    summary = json.loads((out / "summary.json").read_text())
    assert summary["runs_reused"] >= len(before) and summary["runs_used"] <= 120 - len(before)
