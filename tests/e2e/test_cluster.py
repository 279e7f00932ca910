"""Multi-node for real, on one two-node cluster shared by this module's tests (it is started
once: about 25 s on this machine): a sweep submitted with ``ray job submit``, a join without the
token, a job stopped mid-sweep then resubmitted, and the worker node killed mid-sweep (no run
lost). A test that killed the worker node leaves the next one a fresh worker node, joined in
seconds (:meth:`tests.cluster.TwoNodes.make_whole`), not a whole new cluster.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster import CLI, RAY, TwoNodes, records, sweep_dir, two_node_cluster

pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def cluster() -> Iterator[TwoNodes]:
    with two_node_cluster() as started:
        yield started


@pytest.fixture
def two_nodes(cluster: TwoNodes) -> TwoNodes:
    """The module's cluster with both its nodes up (a worker node killed before is replaced)."""
    cluster.make_whole()
    return cluster


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
    # Ray retries a join the cluster refuses until counterfact's bound ends it (4 s here)
    work = sweep_dir(tmp_path, samples=2, sleep_s=0.0, extra="executor: {join_timeout_s: 4}\n")
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
    assert json.loads((out / "summary.json").read_text())["execution"]["status"] == "interrupted"
    again = submit("cf-second")
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    runs = records(out)
    keys = [(r["arm"], r["seed"]) for r in runs]
    assert len(keys) == len(set(keys)) == 120  # every run exactly once across both jobs
    summary = json.loads((out / "summary.json").read_text())
    assert summary["execution"]["runs_reused"] >= len(before) and summary["execution"][
        "runs_used"
    ] <= 120 - len(before)


@pytest.mark.parametrize(
    ("executor", "sleep_s"),
    # overlapping runs are few and long, so some are still running on the node when it dies
    [("", 0.1), ("executor: {concurrency: 8}\n", 1.0)],
    ids=["one-run-per-cpu", "overlapping-runs-on-actors"],
)
def test_killing_the_worker_node_loses_no_run(
    two_nodes: TwoNodes, tmp_path: Path, executor: str, sleep_s: float
) -> None:
    # runs on the worker node last 2 s and mark themselves while they run: the kill lands on one
    # in flight there, however late the node's first worker process starts on a loaded machine
    work = sweep_dir(tmp_path, samples=60, sleep_s=sleep_s, extra=executor, busy_s=2.0)
    out, busy = tmp_path / "out", tmp_path / "busy"
    driver = subprocess.Popen(
        [*CLI, "run", str(work / "sweep.yaml"), "--address", two_nodes.gcs, "--out", str(out)],
        env=two_nodes.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        raylet = two_nodes.worker_raylet()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if any(busy.iterdir()):
                break
            time.sleep(0.05)
        assert any(busy.iterdir()), "no run ever started on the worker node"
        os.kill(raylet, signal.SIGKILL)  # the worker node dies mid-sweep
        _, err = driver.communicate(timeout=300)
    finally:  # a driver left running would hold the shared cluster's CPU for the next test
        if driver.poll() is None:
            driver.kill()
            driver.communicate()
    assert driver.returncode == 0, err.decode()[-3000:]
    runs = records(out)
    keys = [(r["arm"], r["seed"]) for r in runs]
    assert len(keys) == len(set(keys)) == 120  # 0 lost, 0 recorded twice
    assert all(r["error"] is None for r in runs)
    retried = [r for r in runs if r["infra_retries"]]
    assert retried, "the runs in flight on the dead node must say they were resubmitted"
    assert all(r["infra_error"] for r in retried)
    # ... and the verdict row names them as a reason for doubt, with their seeds (rule 25).
    rows = [json.loads(x) for x in (out / "verdicts.jsonl").read_text().splitlines()]
    (alt,) = [r for r in rows if r["arm"] == "alt"]
    (lost,) = [x for x in alt["reasons"] if x["code"] == "runs-lost-workers"]
    assert lost["count"] == len(retried) and alt["standing"] == "not-sure"
    assert lost["seeds"] == sorted({int(str(r["seed"])) for r in retried})[:20]
