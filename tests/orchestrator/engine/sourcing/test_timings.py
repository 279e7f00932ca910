"""Start-up you can see: a progress line while the executor starts, and ``summary.json``
``timings`` (start-up, execution, judging, report seconds).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from counterfact import compare_arms
from counterfact.orchestrator.engine.executors.local import LocalExecutor
from counterfact.orchestrator.engine.sourcing.timings import SweepClock, start_executor

from ....conftest import TESTS
from ....helpers import invoke, run_record

QUICKSTART = TESTS.parent / "configs" / "quickstart.yaml"


class _Phases:
    def __init__(self) -> None:
        self.said: list[str] = []

    def start(self, total: int) -> None: ...

    def advance(self, ok: bool) -> None: ...

    def finish(self) -> None: ...

    def phase(self, text: str) -> None:
        self.said.append(text)


class _SlowStart(LocalExecutor):
    def start_phase(self) -> str | None:
        return "starting Ray"


def test_a_slow_start_is_said_as_a_phase() -> None:
    shown, clock = _Phases(), SweepClock()
    start_executor(_SlowStart(), shown, clock)
    assert shown.said == ["starting Ray"]


def test_an_in_process_start_says_nothing() -> None:
    shown = _Phases()
    start_executor(LocalExecutor(), shown, SweepClock())
    assert shown.said == []


def test_the_ray_executor_says_it_is_starting_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    import ray

    from counterfact.orchestrator.engine.executors.options import ExecutorOptions
    from counterfact.orchestrator.engine.executors.ray_exec import RayExecutor

    # whether this test process already runs a shared Ray instance or not, answer as a fresh
    # process would, then as one that runs Ray
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    assert RayExecutor().start_phase() == "starting Ray"
    assert RayExecutor(ExecutorOptions(address="auto")).start_phase() == "joining Ray at auto"
    monkeypatch.setattr(ray, "is_initialized", lambda: True)
    assert RayExecutor().start_phase() is None


def test_start_up_ends_when_the_first_run_started() -> None:
    clock = SweepClock()
    clock.executor_starting()
    clock.observe(run_record(0))
    found = clock.record()
    assert found.startup_s is not None and found.execution_s == 0.0
    assert found.judging_s is None  # judging has not begun


def test_nothing_executed_has_no_start_up() -> None:
    found = SweepClock().record()
    assert (found.startup_s, found.execution_s, found.judging_s) == (None, None, None)


def test_the_summary_records_where_the_seconds_went(tmp_path: Path) -> None:
    arms = [{"id": "base"}, {"id": "alt", "facets": {"model": "m2"}}]
    result = compare_arms(
        arms, "runners.py:echo_arm", base_dir=TESTS, out=tmp_path / "o", executor="local"
    )
    timings = result.summary.execution.timings
    assert timings is not None
    for seconds in (timings.startup_s, timings.execution_s, timings.judging_s):
        assert seconds is not None and seconds >= 0
    assert timings.report_s is None  # the Python API writes no report


def test_the_report_seconds_are_added_once_the_report_is_written(tmp_path: Path) -> None:
    out = tmp_path / "o"
    code, _, err = invoke("run", str(QUICKSTART), "--executor", "local", "--out", str(out))
    assert code == 0, err
    timings = json.loads((out / "summary.json").read_text())["execution"]["timings"]
    assert (out / "report.html").is_file()
    assert set(timings) == {"startup_s", "execution_s", "judging_s", "report_s"}
    assert all(isinstance(v, float) and v >= 0 for v in timings.values())
