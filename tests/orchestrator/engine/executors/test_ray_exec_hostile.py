"""Hostile runners on Ray (issue 27 items 1 and 9): a runner's ``KeyboardInterrupt`` is recorded
with its own type and message (not Ray's ``TaskCancelledError``) on plain tasks and on the worker
actors, and a throttle actor lost mid-sweep leaves its last record in ``summary.json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from counterfact import compare_arms
from counterfact.orchestrator.engine.executors.options import ExecutorOptions
from counterfact.orchestrator.engine.executors.pooling import PoolSettings
from counterfact.orchestrator.engine.executors.ray_exec import RayExecutor
from counterfact.orchestrator.engine.loading.loader import TargetRef
from counterfact.probes.runner import ArmView, RunContext, ScenarioView

from ....conftest import TESTS

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("ray_instance")]
HOSTILE = TESTS / "hostile_runners.py"


@pytest.mark.parametrize(
    ("runner", "executor"),
    [("sync_hostile", {"kind": "ray"}), ("async_hostile", {"kind": "ray", "concurrency": 4})],
    ids=["tasks", "actors"],
)
def test_a_runners_interrupt_on_ray_keeps_its_type_and_message(
    tmp_path: Path, runner: str, executor: dict[str, Any]
) -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        f"{HOSTILE}:{runner}",
        scenarios=[{"id": "s", "inputs": {"what": "interrupt"}, "reference": "yes"}],
        comparator="exact",
        samples=3,
        executor=executor,
        out=tmp_path / "o",
    )
    failed = [(r.arm, r.seed, r.error.type, r.error.message) for r in result.runs if r.error]
    assert failed == [("alt", 0, "KeyboardInterrupt", "the runner's own interrupt")]
    assert len(result.runs) == 6


def test_a_runner_cancelling_its_actors_tasks_leaves_every_run_recorded(tmp_path: Path) -> None:
    # seed 0 of 'alt' cancels every other task on its actor's loop, the engine's runs and its
    # collection call among them: the sweep ends with every run recorded, each cancelled run
    # either recorded as RunCancelled or (its collection lost) run again alone, where the
    # runner finds nothing to cancel
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        f"{HOSTILE}:async_hostile",
        scenarios=[{"id": "s", "inputs": {"what": "cancel-others"}, "reference": "yes"}],
        comparator="exact",
        samples=3,
        executor={"kind": "ray", "concurrency": 4, "timeout_s": 60},
        out=tmp_path / "o",
    )
    assert sorted((r.arm, r.seed) for r in result.runs) == [
        (arm, seed) for arm in ("alt", "base") for seed in range(3)
    ]
    assert {r.error.type for r in result.runs if r.error} <= {"RunCancelled"}
    culprit = next(r for r in result.runs if (r.arm, r.seed) == ("alt", 0))
    assert culprit.error is not None or culprit.infra_retries == 1, culprit


def test_a_throttle_lost_mid_sweep_leaves_its_last_record() -> None:
    import ray

    scenario = ScenarioView("s", {"what": "none"})
    contexts = [RunContext(scenario, ArmView("base", {}), seed) for seed in range(40)]
    executor = RayExecutor(ExecutorOptions(pool=PoolSettings(concurrency=4)))
    records = []
    for record in executor.run(TargetRef("file", str(HOSTILE), "async_slow"), contexts):
        records.append(record)
        if len(records) == 20:  # the driver has read the throttle by now (once a second)
            assert executor._actors is not None
            ray.kill(executor._actors.throttle, no_restart=True)
    summary = executor.throttle_summary()
    executor.close()
    assert len(records) == 40, records
    assert [r.error for r in records if r.error] == []
    assert summary is not None and summary["throttle_lost"] is True
    assert summary["configured"] == 4
