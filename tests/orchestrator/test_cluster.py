"""Multi-node for real: a two-node Ray cluster on this machine (head + worker node, 1 CPU each,
joined over loopback, token authentication on), a sweep submitted with ``ray job submit``, a
join without the token, and the worker node killed mid-sweep.

Each cluster gets its own temp dirs and a random token (never ``~/.ray``), and teardown stops
only the processes it started: those whose command line names its temp dirs, and their
descendants (Ray's workers rename themselves, so they are found as children).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.ray

RAY = str(Path(sys.executable).parent / "ray")
CLI = (sys.executable, "-m", "counterfact.orchestrator.cli")
RUNNER = """
import time

def run(ctx):
    time.sleep(float(ctx.scenario.inputs.get("sleep_s", 0.05)))
    return "yes" if ctx.arm.id == "base" else "no"
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def processes_of(marks: list[str]) -> set[int]:
    """Processes whose command line names one of ``marks``, with all their descendants."""
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    mine = {os.getpid(), os.getppid()}
    tree = {p for p in pids if p not in mine and any(m in _cmdline(p) for m in marks)}
    while True:
        more = {p for p in pids if _parent(p) in tree} - tree
        if not more:
            return tree
        tree |= more


def kill(pids: set[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@dataclass
class TwoNodes:
    env: dict[str, str]
    """The environment that may talk to the cluster (token included)."""
    gcs: str
    dashboard: str
    tmp: Path
    """The cluster's temp dir (a joining node uses the head's)."""
    worker_port: int
    """The worker node's node-manager port: tells its raylet from the head's."""

    def worker_raylet(self) -> int:
        (pid,) = [
            p
            for p in processes_of([str(self.tmp)])
            if "raylet/raylet" in _cmdline(p)
            and f"--node_manager_port={self.worker_port} " in _cmdline(p)
        ]
        return pid


def _agent_ports() -> list[str]:
    """Ports of its own for a node's dashboard agent. Both nodes share 127.0.0.1, and the
    session's shared Ray instance may hold the default (52365): an agent that loses that race
    never registers, and the head then takes no job ("Agent info not found")."""
    return [
        f"--dashboard-agent-listen-port={free_port()}",
        f"--dashboard-agent-grpc-port={free_port()}",
    ]


def _start(tmp: Path, args: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(
        [RAY, "start", *args, "--num-cpus=1", "--node-ip-address=127.0.0.1"],
        env={**env, "RAY_TMPDIR": str(tmp)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.fixture
def two_nodes() -> Iterator[TwoNodes]:
    tmp = Path(tempfile.mkdtemp(prefix="cfh", dir="/tmp"))  # short: unix socket paths
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env |= {
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": secrets.token_hex(16),
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_health_check_period_ms": "1000",  # notice a dead node within seconds
        "RAY_health_check_failure_threshold": "3",
    }
    gcs, dashboard, worker_port = free_port(), free_port(), free_port()
    cluster = TwoNodes(env, f"127.0.0.1:{gcs}", f"http://127.0.0.1:{dashboard}", tmp, worker_port)
    head = ["--head", f"--port={gcs}", "--dashboard-host=127.0.0.1"]
    try:
        _start(tmp, [*head, f"--dashboard-port={dashboard}", *_agent_ports()], env)
        worker = [f"--address={cluster.gcs}", f"--node-manager-port={worker_port}"]
        _start(tmp, [*worker, *_agent_ports()], env)
        _wait_for_jobs(cluster)
        _wait_for_cpus(cluster, 2)
        yield cluster
    finally:
        kill(processes_of([str(tmp)]))
        shutil.rmtree(tmp, ignore_errors=True)


JOB_AGENT_WAIT_S = 300.0
"""How long the head's job agent may take to register: seconds when the machine is quiet, over
a minute and a half on a loaded 2-core machine (where 90 s was seen to fail)."""


def _wait_for_jobs(cluster: TwoNodes, timeout_s: float = JOB_AGENT_WAIT_S) -> None:
    """``ray start`` returns before the head's job agent registers ("No available agent to
    submit job"): submit a no-op job until one is accepted and succeeds, at most ``timeout_s``.
    """
    deadline = time.monotonic() + timeout_s
    tries = 0
    while True:
        tries += 1
        done = subprocess.run(
            [RAY, "job", "submit", "--address", cluster.dashboard, "--", sys.executable, "-c", "0"],
            env=cluster.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode == 0:
            return
        if time.monotonic() >= deadline:
            pytest.fail(
                f"the two-node cluster's job agent accepted no job within {timeout_s:.0f} s "
                f"({tries} submissions; is the machine overloaded?); last error:\n"
                + done.stderr[-2000:]
            )
        time.sleep(3)


def _wait_for_cpus(cluster: TwoNodes, cpus: int, timeout_s: float = 120.0) -> None:
    """The job agent can answer before the worker node schedules work: wait until the cluster
    counts both nodes' CPUs (else a short sweep may run wholly on the head)."""
    probe = (
        f"import ray; ray.init(address='{cluster.gcs}', logging_level='ERROR');"
        "print(int(ray.available_resources().get('CPU', 0)))"
    )
    deadline = time.monotonic() + timeout_s
    seen = ""
    while time.monotonic() < deadline:
        done = subprocess.run(
            [sys.executable, "-c", probe],
            env=cluster.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        seen = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:]
        if seen == str(cpus):
            return
        time.sleep(1)
    pytest.fail(f"the two-node cluster never offered {cpus} CPUs within {timeout_s:.0f} s: {seen}")


def sweep_dir(tmp_path: Path, samples: int, sleep_s: float, extra: str = "") -> Path:
    work = tmp_path / "job"
    work.mkdir()
    (work / "agent.py").write_text(RUNNER)
    (work / "sweep.yaml").write_text(
        f"name: mn\nrunner: agent.py:run\nsamples: {samples}\n"
        f"scenarios: [{{id: s, inputs: {{sleep_s: {sleep_s}}}, reference: 'yes'}}]\n"
        "comparator: {kind: exact}\narms: [{id: base}, {id: alt, facets: {m: 1}}]\n" + extra
    )
    return work


def records(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]


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
    again = submit("cf-second")
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    runs = records(out)
    keys = [(r["arm"], r["seed"]) for r in runs]
    assert len(keys) == len(set(keys)) == 120  # every run exactly once across both jobs
    summary = json.loads((out / "summary.json").read_text())
    assert summary["runs_reused"] >= len(before) and summary["runs_used"] <= 120 - len(before)
