"""``SweepInterrupted`` carries the counts its message states, fixed plan or sequential, on the
in-process executor."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from counterfact.exceptions import SweepInterrupted
from counterfact.orchestrator.config.loading import validate_config
from counterfact.orchestrator.config.resolve import resolve_sweep
from counterfact.orchestrator.drivers.sweep import run_sweep
from counterfact.orchestrator.engine.executors.feed import RunFeed
from counterfact.orchestrator.engine.executors.local import LocalExecutor
from counterfact.orchestrator.engine.loading.loader import RunnerRef
from counterfact.probes.runner import RunContext
from counterfact.records.runs import RunRecord

from ...conftest import TESTS

ARMS = [
    {"id": "base", "facets": {"rate": 0.05}},
    {"id": "mid", "facets": {"rate": 0.5}},
    {"id": "same", "facets": {"rate": 0.05, "v": 2}},
]


class _StopAfter(LocalExecutor):
    """Requests a stop (as Ctrl-C does) after ``n`` records."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n

    def run(
        self, runner: RunnerRef, contexts: Sequence[RunContext] | RunFeed
    ) -> Iterator[RunRecord]:
        for i, record in enumerate(super().run(runner, contexts)):
            yield record
            if i + 1 >= self.n:
                self.request_stop()


def _interrupt(out: Path, stop_after: int, **extra: Any) -> SweepInterrupted:
    config = {
        "name": "cut",
        "runner": "runners.py:flip_rate",
        "runner_version": "v1",
        "samples": 4,
        "reference": "A",
        "comparator": {"kind": "exact"},
        "executor": {"kind": "local"},
        "arms": ARMS,
        **extra,
    }
    sweep = resolve_sweep(validate_config(config), base_dir=TESTS)
    with pytest.raises(SweepInterrupted) as caught:
        run_sweep(sweep, run_dir=out, executor=_StopAfter(stop_after))
    return caught.value


def _on_disk(out: Path) -> int:
    return len((out / "runs.jsonl").read_text().splitlines())


def _stated(exc: SweepInterrupted) -> int:
    found = re.match(r"interrupted: (\d+)", str(exc))
    assert found, str(exc)
    return int(found.group(1))


def test_a_sequential_sweep_past_its_first_wave_counts_every_recorded_run(tmp_path: Path) -> None:
    # first wave: 3 arms x 4 seeds = 12 runs; stopping after 20 lands in the second wave
    exc = _interrupt(tmp_path / "o", 20, sequential={"max_samples": 40, "wave": 4})
    recorded = _on_disk(tmp_path / "o")
    assert recorded > 12
    assert exc.recorded == _stated(exc) == recorded
    assert exc.planned == 3 * 40  # every seed up to the cap: the most the sweep plans
    assert exc.recorded <= exc.planned


def test_a_fixed_plan_counts_what_its_message_says(tmp_path: Path) -> None:
    exc = _interrupt(tmp_path / "o", 5, samples=10)
    assert exc.recorded == _stated(exc) == _on_disk(tmp_path / "o")
    assert exc.planned == 30 and f"of {exc.planned} runs recorded" in str(exc)
