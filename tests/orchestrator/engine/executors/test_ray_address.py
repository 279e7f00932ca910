"""Starting and joining Ray predictably (each case in a fresh process: the session's shared Ray
instance must not answer for it).

A leftover ``ray_current_cluster`` file naming a dead head used to make a plain sweep hang for
minutes on Ray's connection retries.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from counterfact.orchestrator.engine.executors.ray_address import resolve_address

from ....conftest import TESTS

QUICKSTART = TESTS.parent / "configs" / "quickstart.yaml"


@pytest.fixture
def stale_tmpdir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    # A short path: Ray puts unix sockets under RAY_TMPDIR, and those have a length limit.
    folder = Path(tempfile.mkdtemp(prefix="cfray", dir="/tmp"))
    (folder / "ray").mkdir()
    (folder / "ray" / "ray_current_cluster").write_text("127.0.0.1:1\n")  # nothing listens
    monkeypatch.setenv("RAY_TMPDIR", str(folder))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def cli(*args: str, timeout: float) -> tuple[subprocess.CompletedProcess[str], float]:
    t0 = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "counterfact.orchestrator.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return done, time.monotonic() - t0


def test_auto_resolves_the_cluster_file(stale_tmpdir: Path) -> None:
    assert resolve_address("auto") == "127.0.0.1:1"
    assert resolve_address("10.0.0.5:6379") == "10.0.0.5:6379"


def test_a_dead_leftover_address_fails_fast_with_the_fix(
    stale_tmpdir: Path, tmp_path: Path
) -> None:
    done, took = cli(
        "run", str(QUICKSTART), "--address", "auto", "--out", str(tmp_path / "o"), timeout=60
    )
    assert done.returncode == 1
    assert "cannot reach a Ray cluster at 127.0.0.1:1 (from 'auto')" in done.stderr
    assert "drop --address to start a local instance" in done.stderr
    assert took < 30  # refused at the connection check, not after Ray's minutes of retries


@pytest.mark.ray
def test_no_address_starts_a_fresh_instance_despite_a_leftover(
    stale_tmpdir: Path, tmp_path: Path
) -> None:
    done, _ = cli("run", str(QUICKSTART), "--out", str(tmp_path / "o"), timeout=240)
    assert done.returncode == 0, done.stderr
    assert "stale-index  confirmed" in done.stdout


def test_a_port_that_accepts_tcp_but_is_not_ray_fails_within_join_timeout_s(
    tmp_path: Path,
) -> None:
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))  # loopback only
    server.listen(64)
    port = server.getsockname()[1]
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:  # accepts every connection and never says a word
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        # the quickstart with a 4 s join bound (the default, 20 s, is the same code: this
        # test waits out the bound, so a short one keeps the suite quick)
        text = QUICKSTART.read_text(encoding="utf-8")
        text = text.replace("quickstart_agent.py", str(QUICKSTART.parent / "quickstart_agent.py"))
        cfg = tmp_path / "quick.yaml"
        cfg.write_text(
            text.replace("executor: {kind: ray}", "executor: {kind: ray, join_timeout_s: 4}")
        )
        done, took = cli(
            "run",
            str(cfg),
            "--address",
            f"127.0.0.1:{port}",
            "--out",
            str(tmp_path / "o"),
            timeout=120,
        )
    finally:
        stop.set()
        thread.join(timeout=5)
        for conn in held:
            conn.close()
        server.close()
    assert done.returncode == 1, done.stderr[-2000:]
    last = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert last and f"could not join the Ray cluster at '127.0.0.1:{port}' within 4 s" in last[-1]
    assert took < 4 + 20  # the bound, plus starting Python and the CLI on a loaded machine


def test_a_malformed_address_is_bad_input(tmp_path: Path) -> None:
    done, _ = cli("validate", str(QUICKSTART), "--address", "not-an-address", timeout=60)
    assert done.returncode == 2
    assert "'not-an-address' is not a Ray address" in done.stderr


def test_ray_address_in_the_environment_is_joined_or_one_clear_error(tmp_path: Path) -> None:
    # issue 45: the sweep said it used RAY_ADDRESS, then started a local Ray instance
    import os
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    agent = TESTS.parent / "configs" / "quickstart_agent.py"
    cfg = tmp_path / "sweep.yaml"
    cfg.write_text(
        f"name: q\nrunner: {agent}:run\nsamples: 2\nreference: x\n"
        "arms: [{id: a, facets: {retrieval: bm25, model: small}}, {id: b, facets: {model: large}}]\n"
        "comparator: {kind: exact}\n",
        encoding="utf-8",
    )
    t0 = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "counterfact.orchestrator.cli",
            "run",
            str(cfg),
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "RAY_ADDRESS": f"127.0.0.1:{port}"},
    )
    took = time.monotonic() - t0
    assert done.returncode == 1, done.stderr
    said = f"RAY_ADDRESS=127.0.0.1:{port} is set: joining that cluster"
    assert f"note: executor: ray (address: {said})" in done.stdout
    assert f"joining Ray at 127.0.0.1:{port} (RAY_ADDRESS)" in done.stderr
    assert "starting Ray" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert f"cannot reach a Ray cluster at 127.0.0.1:{port} (from RAY_ADDRESS=" in errors[0]
    assert "unset RAY_ADDRESS" in errors[0] and "--executor local" in errors[0]
    assert (
        not (tmp_path / "o" / "runs.jsonl").exists()
        or not (tmp_path / "o" / "runs.jsonl").read_text()
    )
    assert took < 30
