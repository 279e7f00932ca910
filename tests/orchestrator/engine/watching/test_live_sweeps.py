"""``live.json`` and the progress line's live numbers on real sweeps: an API-bound sweep meeting
429s from the loopback stand-in (through the real openai client), a budget stop, a bisection, a
sequential sweep, a sweep stalled then stopped with SIGINT in a subprocess, and the progress line
on a real pseudo-terminal.
"""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from counterfact import BudgetExhausted, RunContext, RunsFailed, compare_arms, find_culprits
from counterfact.orchestrator.engine.watching.progress import LogProgress
from counterfact.records import LiveState, read_live

from ....conftest import TESTS, write_config
from ....standin import StandIn

ARMS = [{"id": "base"}, {"id": "alt", "facets": {"model": "flaky-model"}}]
ORDER = ["starting", "running", "judging", "finished"]


class Recorder(LogProgress):
    """The non-terminal progress display, keeping every live snapshot it is shown."""

    def __init__(self) -> None:
        super().__init__(every_s=0.0)
        self.states: list[LiveState] = []

    def live(self, state: LiveState) -> None:
        self.states.append(state)
        super().live(state)


def _runs(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines() if x.strip()]


def _scenarios(api: StandIn) -> list[dict[str, Any]]:
    return [{"id": "q", "inputs": {"base_url": api.base_url}, "reference": "Paris"}]


def test_an_api_sweep_under_429s_counts_in_flight_429s_concurrency_and_spend(
    tmp_path: Path,
) -> None:
    out = tmp_path / "o"
    # the server holds 5 calls at once and refuses the rest: the sweep waits out 429s and its
    # throttle cuts the limit; 160 calls of ~0.1 s at ~5 at a time take a few seconds
    with (
        StandIn(median_s=0.1, p95_s=0.2, max_in_flight=5, retry_after=0.1) as api,
        capture_logs() as logs,
    ):
        shown = Recorder()  # its logger is made inside the capture
        compare_arms(
            ARMS,
            "io_runners.py:ask_openai",
            base_dir=TESTS,
            samples=80,
            scenarios=_scenarios(api),
            comparator="contains",
            executor={"kind": "local", "concurrency": 30},
            out=out,
            progress=shown,
        )
    states = shown.states
    statuses = [s.status for s in states]
    assert sorted(set(statuses), key=ORDER.index) == ORDER  # each of them, in that order
    assert statuses == sorted(statuses, key=ORDER.index)
    assert all(s.in_flight <= 30 for s in states)  # never more than executor.concurrency
    running = [s for s in states if s.status == "running"]
    assert any(s.in_flight > 0 and s.concurrency is not None for s in running)
    last = states[-1]
    assert read_live(out) == last  # the last snapshot shown is the one left in live.json
    runs = _runs(out)
    assert (last.runs_done, last.runs_planned, last.runs_failed, last.in_flight) == (160, 160, 0, 0)
    assert last.waited_429 == api.stats.refused == sum(r["rate_limited"] for r in runs) > 0
    assert last.spend["usd"] == pytest.approx(sum(r["cost"]["usd"] for r in runs))  # 160 x 0.01
    assert last.spend["tokens"] == pytest.approx(sum(r["cost"]["tokens"] for r in runs))
    assert last.concurrency is not None and last.concurrency_max == 30
    assert last.runs_per_s is not None and last.runs_per_s > 0 and last.eta_s is None
    # off a terminal, the progress events carry the same numbers
    progress = [e for e in logs if e["event"] == "sweep.progress"]
    assert progress and all(
        {"in_flight", "waited_429", "concurrency", "concurrency_max", "spend"} <= e.keys()
        for e in progress
    )
    assert any(e["concurrency"] is not None and e["spend"] for e in progress)


def test_a_budget_stop_leaves_live_json_stopped_with_its_spend(tmp_path: Path) -> None:
    out = tmp_path / "o"
    with StandIn(median_s=0.02, p95_s=0.04) as api, pytest.raises(BudgetExhausted):
        compare_arms(
            ARMS,
            "io_runners.py:ask_httpx",
            base_dir=TESTS,
            samples=10,
            scenarios=_scenarios(api),
            comparator="contains",
            executor={"kind": "local", "concurrency": 4},
            budget={"usd": 0.1},
            out=out,
        )
    live = read_live(out)
    runs = _runs(out)
    assert live.status == "stopped" and live.budget == {"usd": 0.1}
    assert live.runs_done == len(runs) < live.runs_planned == 20
    assert live.spend["usd"] == pytest.approx(0.01 * len(runs))


def test_a_runner_that_cannot_work_leaves_live_json_stopped(tmp_path: Path) -> None:
    def broken(ctx: RunContext) -> str:
        msg = "no API key"
        raise RuntimeError(msg)

    with pytest.raises(RunsFailed):  # the first run of every arm failed the same way
        compare_arms(
            [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
            broken,
            samples=20,
            reference="yes",
            executor="local",
            out=tmp_path / "o",
        )
    live = read_live(tmp_path / "o")
    assert live.status == "stopped" and live.runs_failed == live.runs_done == len(
        _runs(tmp_path / "o")
    )
    assert live.runs_done < live.runs_planned == 40


def test_a_bisection_writes_live_json(tmp_path: Path) -> None:
    result = find_culprits(
        ["a", "b", "c", "d"],
        "io_runners.py:async_culprit",
        base_dir=TESTS,
        samples=3,
        inputs={"culprit": "c"},
        comparator="exact",
        executor={"kind": "local", "concurrency": 4},
        out=tmp_path / "o",
    )
    assert result.culprits == [["c"]]
    live = read_live(tmp_path / "o")
    # a search has no fixed plan: what it ran is what it planned, and there is no ETA
    assert live.status == "finished" and live.runs_done == live.runs_planned == len(result.runs)
    assert live.in_flight == 0 and live.eta_s is None and live.sweep == "find-culprits"


def test_a_sequential_sweep_that_stops_early_is_stopped(tmp_path: Path) -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        "io_runners.py:async_answer",
        base_dir=TESTS,
        samples=4,
        reference="yes",
        comparator="exact",
        sequential={"max_samples": 40},
        executor={"kind": "local", "concurrency": 8},
        out=tmp_path / "o",
    )
    live = read_live(tmp_path / "o")
    # the arm was decided before its cap: runs were left unplanned (records.live says stopped)
    assert live.runs_planned == 2 * 40 and live.runs_done == len(result.runs) < 80
    assert live.status == "stopped"


def _gated_sweep(tmp_path: Path) -> tuple[list[str], Path, Path]:
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
    return cmd, out, gate


def _live_or_none(out: Path) -> LiveState | None:
    try:
        return read_live(out)
    except FileNotFoundError:
        return None


def test_a_stalled_sweep_refreshes_live_json_and_ends_interrupted_on_sigint(
    tmp_path: Path,
) -> None:
    # seeds 0-19 answer at once (40 runs), every later one waits for a gate file that is never
    # made: 20 runs stay in flight and nothing finishes, yet live.json goes on being refreshed
    cmd, out, _ = _gated_sweep(tmp_path)
    driver = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        stalled = None
        while time.monotonic() < deadline:
            stalled = _live_or_none(out)
            if stalled is not None and stalled.runs_done == 40 and stalled.in_flight == 20:
                break
            time.sleep(0.05)
        assert stalled is not None and stalled.status == "running", stalled
        assert (stalled.runs_done, stalled.in_flight, stalled.runs_planned) == (40, 20, 200)
        while time.monotonic() < deadline:
            later = read_live(out)
            if later.updated_at != stalled.updated_at:
                break
            time.sleep(0.05)
        assert later.updated_at > stalled.updated_at and later.runs_done == 40
        driver.send_signal(signal.SIGINT)
        _, err = driver.communicate(timeout=60)
    finally:
        if driver.poll() is None:  # stop only the process this test started
            driver.kill()
            driver.communicate()
    assert driver.returncode == 130, err.decode()
    final = read_live(out)
    assert final.status == "interrupted" and final.in_flight == 0 and final.eta_s is None
    assert final.runs_done == len(_runs(out)) == 40


def _read_all(fd: int, into: bytearray) -> None:
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed its end
            return
        if not chunk:
            return
        into.extend(chunk)


def test_the_progress_line_on_a_terminal(tmp_path: Path) -> None:
    with StandIn(median_s=0.1, p95_s=0.2, max_in_flight=5, retry_after=0.1) as api:
        cfg = write_config(
            tmp_path,
            f"name: tty\nrunner: {TESTS / 'io_runners.py'}:ask_openai\nsamples: 60\n"
            f"scenarios: [{{id: q, inputs: {{base_url: '{api.base_url}'}}, reference: Paris}}]\n"
            "comparator: contains\nexecutor: {kind: local, concurrency: 25}\n"
            "budget: {usd: 20}\narms: [{id: base}, {id: alt, facets: {model: flaky-model}}]\n",
        )
        cmd = [sys.executable, "-m", "counterfact.orchestrator.cli", "run", str(cfg)]
        cmd += ["--out", str(tmp_path / "o"), "--no-report"]
        main, child = pty.openpty()  # stderr is a terminal: the progress bar, not log events
        env = {**os.environ, "COLUMNS": "100"}
        driver = subprocess.Popen(cmd, stdin=child, stdout=child, stderr=child, env=env)
        os.close(child)
        seen = bytearray()
        reader = threading.Thread(target=_read_all, args=(main, seen), daemon=True)
        reader.start()
        try:
            assert driver.wait(timeout=120) == 0, seen.decode(errors="replace")
        finally:
            if driver.poll() is None:
                driver.kill()
                driver.wait()
        reader.join(10)
        os.close(main)
    lines = [x.strip() for x in seen.decode(errors="replace").split("\r") if "runs  [" in x]
    assert any("in flight" in x and "429s " in x and "conc " in x for x in lines), lines[-5:]
    assert any("of $20" in x and "runs/s" in x and "ETA " in x for x in lines), lines[-5:]
    last = lines[-1]
    assert "120/120, 0 in flight" in last and "$1.20 of $20" in last, last
    assert all(len(x.split("\x1b[?25h")[0].replace("\x1b[?25l", "")) <= 100 for x in lines)


@pytest.mark.ray
@pytest.mark.usefixtures("ray_instance")
def test_on_ray_the_numbers_come_from_the_driver_and_the_throttle_actor(tmp_path: Path) -> None:
    out = tmp_path / "o"
    shown = Recorder()
    with StandIn(median_s=0.05, p95_s=0.1, max_in_flight=6, retry_after=0.05) as api:
        compare_arms(
            ARMS,
            "io_runners.py:ask_openai",
            base_dir=TESTS,
            samples=60,
            scenarios=_scenarios(api),
            comparator="contains",
            executor={"kind": "ray", "concurrency": 40},
            out=out,
            progress=shown,
        )
    last = read_live(out)
    runs = _runs(out)
    assert last.status == "finished" and last.runs_done == 120 and last.in_flight == 0
    # the throttle actor's limit, read by the driver (no call per run), and every 429 waited
    assert last.concurrency is not None and last.concurrency_max == 40
    assert last.waited_429 == api.stats.refused == sum(r["rate_limited"] for r in runs) > 0
    assert last.spend["usd"] == pytest.approx(0.01 * 120)
    assert [s.status for s in shown.states][-1] == "finished"


def test_the_how_to_example_reads_live_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = (TESTS.parent / "docs" / "how-to" / "progress.md").read_text(encoding="utf-8")
    (example,) = [b.split("\n", 1)[1] for b in page.split("```")[1::2] if b.startswith("python")]
    compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        "io_runners.py:async_answer",
        base_dir=TESTS,
        samples=5,
        reference="yes",
        comparator="exact",
        executor="local",
        name="docs",
        out=tmp_path / "o",
    )
    capsys.readouterr()  # what the sweep logged (a test before may have configured logging)
    exec(example, {"run_dir": tmp_path / "o"})
    assert capsys.readouterr().out == "docs: finished, 10/10 runs\n"
