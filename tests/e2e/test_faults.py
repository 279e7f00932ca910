"""Fault tests with real processes and a real Ray instance; no mocks of Ray."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from counterfact import compare_arms

from ..conftest import TESTS, write_config

pytestmark = pytest.mark.ray
RUNNERS = TESTS / "fault_runners.py"
ARMS = [{"id": "base"}, {"id": "alt", "facets": {"answer": "no"}}]


def records(out: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines() if x.strip()]


def keys(rows: list[dict[str, object]]) -> list[tuple[object, object, object]]:
    return [(r["scenario"], r["arm"], r["seed"]) for r in rows]


def calls(log: Path, session: str) -> set[tuple[str, int]]:
    out = set()
    for line in log.read_text().splitlines():
        s, arm, seed, _ = line.split()
        if s == session:
            out.add((arm, int(seed)))
    return out


def verdicts(out: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in (out / "verdicts.jsonl").read_text().splitlines()]


def cli(*args: str, session: str, **popen: object) -> subprocess.Popen[bytes]:
    env = {**os.environ, "CF_SESSION": session}
    cmd = [sys.executable, "-m", "counterfact.orchestrator.cli", *args]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)  # type: ignore[call-overload]


def test_sigkill_driver_then_resume(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    cfg = write_config(
        tmp_path,
        f"name: k\nrunner: {RUNNERS}:steady\nsamples: 30\n"
        f"scenarios: [{{id: s, inputs: {{log: '{log}', sleep_s: 0.05}}}}]\n"
        "comparator: {kind: exact}\nexecutor: {kind: ray, num_cpus: 2}\n"
        "arms: [{id: base}, {id: alt, facets: {answer: 'no'}}]\n",
    )
    out = tmp_path / "o"
    driver = cli("run", str(cfg), "--out", str(out), session="1", start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if (out / "runs.jsonl").exists() and len(records(out)) >= 15:
            break
        time.sleep(0.05)
    os.kill(driver.pid, signal.SIGKILL)
    driver.wait()
    time.sleep(1.0)
    with contextlib.suppress(ProcessLookupError):  # none left: they had ended on their own
        os.killpg(driver.pid, signal.SIGKILL)  # the orphaned Ray processes of the dead driver
    before = keys(records(out))
    assert 15 <= len(before) < 60, "the kill must land mid-sweep"
    whole = tmp_path / "whole"
    # the uninterrupted sweep to compare with runs beside the resume (its own Ray, its own out)
    fresh = cli("run", str(cfg), "--out", str(whole), session="3")
    resumed = cli("run", str(cfg), "--out", str(out), session="2")
    _, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err.decode()
    after = keys(records(out))
    assert len(after) == len(set(after)) == 60  # every (scenario, arm, seed) exactly once
    assert not calls(log, "2") & {(a, s) for _, a, s in before}  # nothing finished re-ran
    _, err = fresh.communicate(timeout=300)  # reads its pipes: it may have filled them meanwhile
    assert fresh.returncode == 0, err.decode()
    assert verdicts(out) == verdicts(whole)


def test_sigkill_of_the_driver_mid_batch_loses_no_counted_run(tmp_path: Path) -> None:
    # A Ray task's records are written and flushed together, then counted one by one: a kill
    # between two counts leaves every counted run (and the rest of its batch) in runs.jsonl, and
    # a resume runs again exactly the runs that have no line.
    log, note = tmp_path / "calls.log", tmp_path / "note"
    cfg = write_config(
        tmp_path,
        f"name: b\nrunner: {RUNNERS}:steady\nsamples: 150\n"
        f"scenarios: [{{id: s, inputs: {{log: '{log}'}}}}]\n"
        "comparator: {kind: exact}\nexecutor: {kind: ray, num_cpus: 2}\n"
        "arms: [{id: base}, {id: alt, facets: {answer: 'no'}}]\n",
    )
    out = tmp_path / "o"
    env = {**os.environ, "CF_SESSION": "1"}
    driver = subprocess.Popen(
        [sys.executable, "-m", "tests.midbatch_driver", str(cfg), str(out), "40", str(note)],
        cwd=TESTS.parent,  # this checkout's counterfact, as ``-m counterfact...`` gets it
        env=env,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    _, err = driver.communicate(timeout=300)
    time.sleep(1.0)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(driver.pid, signal.SIGKILL)  # the orphaned Ray processes of the dead driver
    assert driver.returncode == -signal.SIGKILL, err.decode()[-2000:]
    counted, flushed = map(int, note.read_text().split())
    before = keys(records(out))  # every line whole: nothing was being written at the kill
    assert counted < flushed == len(before) < 300, "the kill must land mid-batch, mid-sweep"
    resumed = cli("run", str(cfg), "--out", str(out), session="2")
    _, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err.decode()
    after = keys(records(out))
    assert len(after) == len(set(after)) == 300
    rerun = calls(log, "2")
    assert rerun == {(a, s) for _, a, s in after} - {(a, s) for _, a, s in before}


@pytest.mark.usefixtures("ray_instance")
def test_killed_worker_run_is_recorded_once(tmp_path: Path) -> None:
    log, pid_file = tmp_path / "calls.log", tmp_path / "pid"
    killed: list[int] = []

    def killer() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            if pid_file.exists() and pid_file.read_text():
                pid = int(pid_file.read_text())
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            time.sleep(0.02)

    thread = threading.Thread(target=killer)
    thread.start()
    inputs = {"log": str(log), "pid_file": str(pid_file), "slow_seed": 2, "slow_s": 3.0}
    result = compare_arms(
        ARMS,
        f"{RUNNERS}:slow_on_seed",
        samples=4,
        comparator="exact",
        scenarios=[{"id": "s", "inputs": inputs, "reference": "yes"}],
        executor="ray",
        out=tmp_path / "o",
    )
    thread.join()
    assert killed, "the worker running alt/2 was killed"
    rows = records(tmp_path / "o")
    assert len(keys(rows)) == len(set(keys(rows))) == 8
    (victim,) = [r for r in rows if r["arm"] == "alt" and r["seed"] == 2]
    assert victim["error"] is None and victim["output"] == "no"
    assert len([c for c in log.read_text().splitlines() if " alt 2 " in c]) == 2  # ran again
    assert result.row("alt").verdict == "confirmed"


HANG_TIMEOUT_S = 20
"""``timeout_s`` of the hanging-run test: far more than a run that does not hang takes on a loaded
machine (a Ray worker can take seconds to start, and the clock runs from submission), far less
than the 600 s the hanging run sleeps, so only the timeout can end that run in time."""


@pytest.mark.usefixtures("ray_instance")
def test_hanging_run_is_cancelled_at_timeout(tmp_path: Path) -> None:
    inputs = {
        "log": str(tmp_path / "calls.log"),
        "pid_file": str(tmp_path / "pid"),
        "slow_seed": 1,
        "slow_s": 600.0,
    }
    start = time.monotonic()
    result = compare_arms(
        ARMS,
        f"{RUNNERS}:slow_on_seed",
        samples=3,
        comparator="exact",
        scenarios=[{"id": "s", "inputs": inputs, "reference": "yes"}],
        out=tmp_path / "o",
        executor={"kind": "ray", "timeout_s": HANG_TIMEOUT_S},
    )
    assert time.monotonic() - start < 600 / 4  # the hanging run did not run out its sleep
    rows = records(tmp_path / "o")
    (hung,) = [r for r in rows if r["arm"] == "alt" and r["seed"] == 1]
    assert hung["error"]["type"] == "RunTimeout"  # type: ignore[index]
    assert f"timeout_s={HANG_TIMEOUT_S}" in hung["error"]["message"]  # type: ignore[index]
    assert hung["duration_s"] >= HANG_TIMEOUT_S  # type: ignore[operator]
    assert len(rows) == 6 and sum(r["error"] is None for r in rows) == 5
    assert (result.row("alt").verdict, result.row("alt").reason) == ("inconclusive", "runs-failed")


@pytest.mark.usefixtures("ray_instance")
def test_exiting_and_raising_runners(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    result = compare_arms(
        ARMS,
        f"{RUNNERS}:misbehaves",
        samples=4,
        comparator="exact",
        scenarios=[{"id": "s", "inputs": {"log": str(log)}, "reference": "yes"}],
        out=tmp_path / "o",
        executor={"kind": "ray", "retries": 2, "retry_on": ["ConnectionError"], "infra_retries": 1},
    )
    rows = {(r["arm"], r["seed"]): r for r in records(tmp_path / "o")}
    assert len(rows) == 8
    exited = rows[("alt", 1)]
    assert exited["output"] is None and "Worker" in str(exited["error"]["type"])  # type: ignore[index]
    retried = rows[("alt", 2)]
    assert retried["error"] is None and retried["attempts"] == 3
    assert all(rows[("base", s)]["error"] is None for s in range(4))
    alt = result.row("alt")
    assert (alt.verdict, alt.reason, alt.failed_seeds) == ("inconclusive", "runs-failed", [1])
    assert alt.runs_retried == 1


@pytest.mark.usefixtures("ray_instance")
def test_resume_after_adding_samples_runs_only_new_seeds(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    kw = {
        "comparator": "exact",
        "executor": "ray",
        "out": tmp_path / "o",
        "scenarios": [{"id": "s", "inputs": {"log": str(log)}, "reference": "yes"}],
    }
    compare_arms(ARMS, f"{RUNNERS}:steady", samples=3, **kw)  # type: ignore[arg-type]
    first = len(log.read_text().splitlines())
    result = compare_arms(ARMS, f"{RUNNERS}:steady", samples=5, **kw)  # type: ignore[arg-type]
    new = log.read_text().splitlines()[first:]
    assert sorted((x.split()[1], int(x.split()[2])) for x in new) == sorted(
        (a, s) for a in ("base", "alt") for s in (3, 4)
    )
    assert result.summary.execution.runs_reused == 6 and result.summary.execution.runs_used == 4


def test_ctrl_c_stops_records_and_resumes(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    cfg = write_config(
        tmp_path,
        f"name: c\nrunner: {RUNNERS}:steady\nsamples: 40\n"
        f"scenarios: [{{id: s, inputs: {{log: '{log}', sleep_s: 0.05, slow_from: 10, "
        "slow_s: 0.5}, reference: 'yes'}]\n"
        "comparator: {kind: exact}\nexecutor: {kind: local}\n"
        "arms: [{id: base}, {id: alt, facets: {answer: 'no'}}]\n",
    )
    out = tmp_path / "o"
    driver = cli("run", str(cfg), "--out", str(out), session="1")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (out / "runs.jsonl").exists() and len(records(out)) >= 10:
            break
        time.sleep(0.02)
    driver.send_signal(signal.SIGINT)
    _, err = driver.communicate(timeout=60)
    assert driver.returncode == 130, err.decode()
    assert "run the same command again to resume: counterfact run" in err.decode()
    stopped = keys(records(out))
    assert 10 <= len(stopped) < 80
    summary = json.loads((out / "summary.json").read_text())
    assert summary["execution"]["status"] == "interrupted" and not (out / "verdicts.jsonl").exists()
    resumed = cli("run", str(cfg), "--out", str(out), session="2")
    assert resumed.wait(timeout=120) == 0
    after = keys(records(out))
    assert len(after) == len(set(after)) == 80
    assert not calls(log, "2") & {(a, s) for _, a, s in stopped}


def test_ctrl_c_during_bisect_records_and_resumes(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    suspects = [f"f{i}" for i in range(16)]
    cfg = write_config(
        tmp_path,
        f"name: b\nrunner: {RUNNERS}:culprit\nsamples: 3\n"
        f"scenarios: [{{id: s, inputs: {{log: '{log}', sleep_s: 0.1, culprit: f13}}, reference: wrong}}]\n"
        f"comparator: {{kind: exact}}\nexecutor: {{kind: local}}\nbisect: {{suspects: {suspects}}}\n",
    )
    out = tmp_path / "o"
    driver = cli("bisect", str(cfg), "--out", str(out), session="1")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (out / "runs.jsonl").exists() and len(records(out)) >= 8:
            break
        time.sleep(0.02)
    driver.send_signal(signal.SIGINT)
    _, err = driver.communicate(timeout=60)
    assert driver.returncode == 130, err.decode()
    partial = json.loads((out / "bisect.json").read_text())
    assert (partial["verdict"], partial["reason"], partial["culprits"]) == (
        "inconclusive",
        "interrupted",
        [],
    )
    stopped = keys(records(out))
    resumed = cli("bisect", str(cfg), "--out", str(out), session="2")
    assert resumed.wait(timeout=120) == 0
    final = json.loads((out / "bisect.json").read_text())
    assert (final["verdict"], final["culprits"]) == ("confirmed", [["f13"]])
    assert final["execution"]["runs_reused"] == len(stopped)
    assert not calls(log, "2") & {(a, s) for _, a, s in stopped}


def test_watch_stops_on_three_contract_errors_with_one_arm_left() -> None:
    from counterfact.orchestrator.engine.stopping.failwatch import FailureWatch
    from counterfact.records.runs import RunError, RunRecord

    def record(arm: str, seed: int, error: tuple[str, str] | None) -> RunRecord:
        return RunRecord(
            scenario="s",
            arm=arm,
            seed=seed,
            output=None if error else "ok",
            manifest=None,
            cost=None,
            error=RunError(type=error[0], message=error[1]) if error else None,
            duration_s=0.0,
            finished_at="2026-11-30T00:00:00Z",
        )

    contract = ("RunnerReturnError", "runner returned int")
    watch = FailureWatch(["s"], ["a", "b", "c"], "a")
    # the baseline's return value broke the contract 3 times: stop
    assert watch.see(record("a", 0, contract)) is None
    assert watch.see(record("a", 1, contract)) is None
    reason = watch.see(record("a", 2, contract))
    assert (
        reason is not None and "broke the contract on 3 runs, the baseline's among them" in reason
    )
    # challengers that break the contract while the baseline has not reported: keep going
    arms = FailureWatch(["s"], ["bad1", "bad2", "bad3", "base"], "base")
    assert all(arms.see(record(a, 0, contract)) is None for a in ("bad1", "bad2", "bad3"))
    # one success disarms it: later failures are evidence about arms
    calm = FailureWatch(["s"], ["a", "b"], "a")
    assert calm.see(record("a", 0, None)) is None
    assert all(calm.see(record("b", s, contract)) is None for s in range(5))
    # different errors on each arm's first run: keep going
    mixed = FailureWatch(["s"], ["a", "b"], "a")
    assert mixed.see(record("a", 0, ("KeyError", "x"))) is None
    assert mixed.see(record("b", 0, ("KeyError", "y"))) is None


def test_one_broken_scenario_does_not_stop_the_others() -> None:
    from counterfact import RunContext, compare_arms

    def runner(ctx: RunContext) -> str:
        return str(ctx.scenario.inputs["q"])  # scenario s1 lacks 'q': KeyError on every arm

    result = compare_arms(
        [{"id": "a"}, {"id": "b", "facets": {"x": 1}}],
        runner,
        scenarios=[
            {"id": "s1", "reference": "yes"},
            {"id": "s2", "inputs": {"q": "yes"}, "reference": "yes"},
        ],
        executor="local",
    )
    assert (
        result.summary.execution.runs_failed == 6 and result.summary.execution.status == "complete"
    )


def test_a_resumed_sweep_with_a_broken_new_arm_is_not_stopped(tmp_path: Path) -> None:
    from counterfact import RunContext, compare_arms

    def runner(ctx: RunContext) -> object:
        return 42 if ctx.arm.id == "new" else "yes"  # the new arm breaks the contract

    arms = [{"id": "a"}, {"id": "b", "facets": {"x": 1}}]
    kw = {"reference": "yes", "executor": "local", "out": tmp_path / "o", "runner_version": "v"}
    compare_arms(arms, runner, **kw)  # type: ignore[arg-type]
    result = compare_arms([*arms, {"id": "new", "facets": {"x": 2}}], runner, **kw)  # type: ignore[arg-type]
    assert result.row("new").reason == "runs-failed" and result.summary.execution.runs_failed == 3


def test_every_run_failing_fails_the_sweep(tmp_path: Path) -> None:
    from counterfact import RunContext, compare_arms
    from counterfact.exceptions import RunsFailed

    def flaky(ctx: RunContext) -> str:
        raise RuntimeError(f"seed {ctx.seed} on {ctx.arm.id}")  # differs per run: no early stop

    with pytest.raises(RunsFailed, match="every one of the 6 runs failed") as caught:
        compare_arms(
            [{"id": "a"}, {"id": "b", "facets": {"x": 1}}],
            flaky,
            out=tmp_path / "o",
            executor="local",
        )
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["execution"]["status"] == "failed" and summary["execution"][
        "failure"
    ].startswith("every one of the 6")
    assert (tmp_path / "o" / "verdicts.jsonl").exists()  # judged and written before failing
    assert caught.value.result is not None


def test_bisection_where_every_run_fails_is_failed(tmp_path: Path) -> None:
    from counterfact import RunContext, find_culprits
    from counterfact.exceptions import RunsFailed

    def broken(ctx: RunContext) -> str:
        raise RuntimeError(f"seed {ctx.seed}")

    with pytest.raises(RunsFailed, match="every one of the"):
        find_culprits(
            ["tool:a", "tool:b"], broken, reference="x", executor="local", out=tmp_path / "b"
        )
    data = json.loads((tmp_path / "b" / "bisect.json").read_text())
    assert data["execution"]["status"] == "failed" and data["execution"]["failure"].startswith(
        "every one of the"
    )
