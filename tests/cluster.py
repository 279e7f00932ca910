"""A two-node Ray cluster on this machine for the multi-node tests (head + worker node, 1 CPU
each, joined over loopback, token authentication on).

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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

RAY = str(Path(sys.executable).parent / "ray")
CLI = (sys.executable, "-m", "counterfact.orchestrator.cli")
RUNNER = """
import os
import pathlib
import time

def run(ctx):
    inputs = ctx.scenario.inputs
    busy = inputs.get("busy_dir")
    if busy and os.environ.get("CF_TEST_WORKER_NODE"):  # on the worker node: long, and seen
        mark = pathlib.Path(busy) / f"{ctx.arm.id}-{ctx.seed}"
        mark.touch()
        time.sleep(float(inputs["busy_s"]))
        mark.unlink()
    else:
        time.sleep(float(inputs.get("sleep_s", 0.05)))
    return "yes" if ctx.arm.id == "base" else "no"
"""
WORKER_MARK = "CF_TEST_WORKER_NODE"
"""Set in the worker node's environment only (its Ray workers inherit it): a sweep given a
``busy_dir`` input marks there each run in flight on the worker node, so a test can kill the node
while it certainly holds a run, not after its last one."""


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

    def _worker_raylets(self) -> list[int]:
        return [
            p
            for p in processes_of([str(self.tmp)])
            if "raylet/raylet" in _cmdline(p)
            and f"--node_manager_port={self.worker_port} " in _cmdline(p)
        ]

    def worker_raylet(self) -> int:
        (pid,) = self._worker_raylets()
        return pid

    def make_whole(self) -> None:
        """After a test killed the worker node: once the head counts it dead, join a fresh
        worker node (a new port) and wait until the cluster offers both nodes' CPUs again.
        Starting a worker node takes seconds; a whole new cluster, about 20 s more."""
        if self._worker_raylets():
            return
        _wait_for_nodes(self, 1)
        self.worker_port = free_port()
        _start_worker(self)
        _wait_for_nodes(self, 2)


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


def _start_worker(cluster: TwoNodes) -> None:
    worker = [f"--address={cluster.gcs}", f"--node-manager-port={cluster.worker_port}"]
    _start(cluster.tmp, [*worker, *_agent_ports()], {**cluster.env, WORKER_MARK: "1"})


@contextlib.contextmanager
def two_node_cluster() -> Iterator[TwoNodes]:
    """Start the cluster, wait until it takes jobs on both nodes, and stop only its processes."""
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
        _start_worker(cluster)
        _wait_for_jobs(cluster)
        _wait_for_nodes(cluster, 2)
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


def _wait_for_nodes(cluster: TwoNodes, nodes: int, timeout_s: float = 120.0) -> None:
    """Wait until the cluster counts ``nodes`` live nodes and offers their CPUs (one each): the
    job agent can answer before the worker node schedules work (a short sweep would then run
    wholly on the head), and a killed node is counted alive until its health checks fail."""
    probe = (
        f"import ray; ray.init(address='{cluster.gcs}', logging_level='ERROR');"
        "alive = [n for n in ray.nodes() if n['Alive']];"
        "print(len(alive), int(ray.available_resources().get('CPU', 0)))"
    )
    want = f"{nodes} {nodes}"
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
        if seen == want:
            return
        time.sleep(1)
    pytest.fail(
        f"the two-node cluster never counted {nodes} live nodes with a CPU each within "
        f"{timeout_s:.0f} s (nodes, CPUs): {seen}"
    )


def sweep_dir(
    tmp_path: Path, samples: int, sleep_s: float, extra: str = "", busy_s: float | None = None
) -> Path:
    """A two-arm sweep of ``samples`` seeds; with ``busy_s``, runs on the worker node take that
    long and mark themselves in ``tmp_path / "busy"`` while they run."""
    work = tmp_path / "job"
    work.mkdir()
    (work / "agent.py").write_text(RUNNER)
    inputs = f"sleep_s: {sleep_s}"
    if busy_s is not None:
        (tmp_path / "busy").mkdir()
        inputs += f", busy_dir: '{tmp_path / 'busy'}', busy_s: {busy_s}"
    (work / "sweep.yaml").write_text(
        f"name: mn\nrunner: agent.py:run\nsamples: {samples}\n"
        f"scenarios: [{{id: s, inputs: {{{inputs}}}, reference: 'yes'}}]\n"
        "comparator: {kind: exact}\narms: [{id: base}, {id: alt, facets: {m: 1}}]\n" + extra
    )
    return work


def records(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
