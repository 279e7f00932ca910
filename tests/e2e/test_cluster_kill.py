"""Multi-node faults for real: the worker node of a two-node cluster killed mid-sweep loses no
run. Each test has a cluster of its own (the kill leaves it one node short).
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

from tests.cluster import CLI, TwoNodes, records, sweep_dir, two_node_cluster

pytestmark = pytest.mark.ray


@pytest.fixture
def two_nodes() -> Iterator[TwoNodes]:
    with two_node_cluster() as cluster:
        yield cluster


@pytest.mark.parametrize(
    ("executor", "sleep_s"),
    # overlapping runs are few and long, so some are still running on the node when it dies
    [("", 0.1), ("executor: {concurrency: 8}\n", 1.0)],
    ids=["one-run-per-cpu", "overlapping-runs-on-actors"],
)
def test_killing_the_worker_node_loses_no_run(
    two_nodes: TwoNodes, tmp_path: Path, executor: str, sleep_s: float
) -> None:
    work = sweep_dir(tmp_path, samples=60, sleep_s=sleep_s, extra=executor)
    out = tmp_path / "out"
    driver = subprocess.Popen(
        [*CLI, "run", str(work / "sweep.yaml"), "--address", two_nodes.gcs, "--out", str(out)],
        env=two_nodes.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    raylet = two_nodes.worker_raylet()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if (out / "runs.jsonl").exists() and len(Counter(r["node"] for r in records(out))) == 2:
            break
        time.sleep(0.1)
    os.kill(raylet, signal.SIGKILL)  # the worker node dies mid-sweep
    _, err = driver.communicate(timeout=300)
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
