"""``counterfact blame DIR --executor ray``: every call's probes on one set of Ray worker actors
under one throttle actor, resumable, against a loopback stand-in model through the real
``openai`` client (issue 38 item 4).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from counterfact.exceptions import ConfigError
from counterfact.orchestrator.importers.blame import BlameOptions, blame_plan
from counterfact.orchestrator.importers.blame_share import Shared
from counterfact.orchestrator.importers.recorded import RecordedCall
from tests.context_model import (
    MARK,
    WRONG,
    blame_lines,
    call_folder,
    context_model,
    passages,
    recorded_call,
)
from tests.helpers import invoke
from tests.standin import StandIn

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("ray_instance")]

KEY = ("--api-key-env", "PATH")
"""The workers started with the session's Ray, before any test set a key: a variable every
process has (the stand-in takes any key)."""


def _nodes(out: Path) -> set[str]:
    nodes = set()
    for runs in (out / "calls").glob("*/runs.jsonl"):
        nodes |= {json.loads(x)["node"] for x in runs.read_text().splitlines()}
    return nodes


def test_a_folder_of_calls_is_blamed_on_ray_workers_and_resumes(tmp_path: Path) -> None:
    """Four calls, each with its planted passage: every one is found by runs made on the Ray
    workers (each record names its node, not ``local``); run again, nothing is sent."""
    import ray

    calls, out = call_folder(tmp_path / "calls", 4), tmp_path / "out"
    with StandIn(median_s=0.005, p95_s=0.01, answer=context_model([MARK])) as api:
        args = ["blame", str(calls), "--base-url", api.base_url, "--out", str(out), *KEY]
        code, stdout, err = invoke(*args, "--no-report", "--executor", "ray")
        assert code == 0, err
        assert "blaming 4 calls" in stdout
        served = api.stats.served
        assert served > 0
        code, _, err = invoke(*args, "--no-report", "--executor", "ray")
        assert code == 0, err
        assert api.stats.served == served  # read back: nothing sent twice
    assert [x["culprits"] for x in blame_lines(out)] == [[[f"m1.p{i}"]] for i in range(4)]
    assert _nodes(out) == {ray.get_runtime_context().get_node_id()}


def test_an_api_that_holds_few_calls_is_met_by_every_call_on_ray_together(tmp_path: Path) -> None:
    """The stand-in refuses (HTTP 429) every call beyond 3 in flight: the calls' probes report
    to the one throttle actor, which steps down; the refused calls wait and run again, and
    every call is blamed."""
    calls, out = call_folder(tmp_path / "calls", 6), tmp_path / "out"
    with StandIn(
        median_s=0.01, p95_s=0.02, max_in_flight=3, retry_after=0.05, answer=context_model([MARK])
    ) as api:
        code, _, err = invoke(
            "blame", str(calls), "--base-url", api.base_url, "--out", str(out), *KEY,
            "--no-report", "--executor", "ray",
        )  # fmt: skip
    assert code == 0, err
    assert [x["culprits"] for x in blame_lines(out)] == [[[f"m1.p{i % 6}"]] for i in range(6)]
    assert api.stats.refused > 0


def test_the_calls_on_ray_share_one_set_of_actors_and_one_throttle() -> None:
    """Two calls' executors drive the hub's one actor pool (one throttle actor), each under a
    channel of its own; closing one leaves the actors to the others."""
    import ray

    from counterfact.orchestrator.engine.executors.ray_shared import SharedRayExecutor

    shared = Shared(2)
    call = RecordedCall("c", recorded_call(passages(4, {1: MARK}))["request"], WRONG, "t")
    plan = blame_plan(
        call, BlameOptions(base_url="http://127.0.0.1:9/v1", executor="ray", api_key_env="PATH")
    )
    shared.start_ray(plan)
    try:
        first, second = shared.executor(plan), shared.executor(plan)
        assert isinstance(first, SharedRayExecutor) and isinstance(second, SharedRayExecutor)
        assert first.channel != second.channel
        hub = shared.hub
        assert hub is not None
        one = first._pool_for(ray, plan.sweep.runner, 0, 2)
        two = second._pool_for(ray, plan.sweep.runner, 0, 2)
        assert one is two and hub.pools() == [one]
        assert one.concurrency == hub.ceiling  # the command's limit, not one call's
        first.close()
        assert ray.get(one.throttle.summary.remote(), timeout=30)[1]["configured"] == hub.ceiling
    finally:
        shared.close()
    assert shared.hub is None


def test_address_joins_ray_and_is_refused_beside_another_executor(tmp_path: Path) -> None:
    from counterfact.orchestrator.cli.blame import _executor

    assert _executor(None, "auto") == {"kind": "ray", "address": "auto"}
    assert _executor("ray", None) == "ray"
    with pytest.raises(ConfigError, match="--address joins a Ray cluster"):
        _executor("local", "auto")
    calls = call_folder(tmp_path / "calls", 2)
    code, _, err = invoke("blame", str(calls), "--executor", "local", "--address", "auto")
    assert code == 2 and "--address joins a Ray cluster" in err


def _runs(out: Path) -> list[tuple[str, str, int]]:
    """Every run recorded under ``out/calls``: (call, arm, seed)."""
    found = []
    for runs in sorted((out / "calls").glob("*/runs.jsonl")):
        for line in runs.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                found.append((runs.parent.name, row["arm"], row["seed"]))
    return found


def test_ctrl_c_during_a_folder_on_ray_keeps_what_ended_and_a_rerun_resumes(
    tmp_path: Path,
) -> None:
    """SIGINT to the CLI (a process of its own, joining the session's Ray) while it blames a
    folder, two calls at once: exit 130 with the resume line, the calls that ended kept in
    ``blame.jsonl`` and every run recorded kept; the same command again blames the rest and
    sends no recorded run again."""
    import ray

    calls, out = call_folder(tmp_path / "calls", 8), tmp_path / "out"
    address = ray.get_runtime_context().gcs_address
    with StandIn(median_s=0.2, p95_s=0.3, answer=context_model([MARK])) as api:
        args = ["blame", str(calls), "--base-url", api.base_url, "--out", str(out), *KEY]
        args += ["--no-report", "--concurrency", "2"]
        cmd = [sys.executable, "-m", "counterfact.orchestrator.cli", *args, "--address", address]
        driver = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline and driver.poll() is None:
                if len(list(out.glob("calls/*/blame.json"))) >= 2:  # two calls ended
                    break
                time.sleep(0.05)
            driver.send_signal(signal.SIGINT)
            _, err = driver.communicate(timeout=120)
        finally:
            if driver.poll() is None:  # only the process this test started
                driver.kill()
                driver.wait(timeout=30)
        text = err.decode()
        assert driver.returncode == 130, text
        assert "run the same command again to resume" in text, text
        ended = blame_lines(out)
        assert 2 <= len(ended) < 8, text  # stopped mid-folder
        kept = _runs(out)
        assert len(kept) == len(set(kept))
        api.stats.served = 0
        code, _, err_again = invoke(*args, "--executor", "ray")  # this process's Ray: the same
        again = _runs(out)
        assert code == 0, err_again
        assert api.stats.served == len(again) - len(kept)  # nothing recorded was sent again
    assert set(kept) <= set(again) and len(again) == len(set(again))
    assert [x["culprits"] for x in blame_lines(out)] == [[[f"m1.p{i % 6}"]] for i in range(8)]


def test_a_call_still_running_after_the_hub_closed_stops_instead_of_starting_ray(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C closes the hub (and the Ray it started) while calls' threads still run: a call's
    executor must not start or join Ray again from its thread, which raced the command's exit."""
    import ray

    from counterfact.exceptions import ExecutorError
    from counterfact.orchestrator.engine.executors.options import ExecutorOptions
    from counterfact.orchestrator.engine.executors.ray_shared import PoolHub

    executor = PoolHub(ExecutorOptions(), 2).executor()
    assert executor._ray() is ray  # the hub's Ray, while it runs
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    with pytest.raises(ExecutorError, match="Ray was shut down"):
        executor._ray()
