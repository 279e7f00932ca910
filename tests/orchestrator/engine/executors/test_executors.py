from __future__ import annotations

import pytest

from counterfact.exceptions import ConfigError
from counterfact.orchestrator.engine.executors.local import LocalExecutor
from counterfact.orchestrator.engine.executors.options import ExecutorOptions
from counterfact.orchestrator.engine.executors.ray_exec import RayExecutor, batch_size
from counterfact.orchestrator.engine.executors.registry import EXECUTORS, make_executor
from counterfact.probes.runner import ArmView, RunContext, ScenarioView


def test_make_executor_by_name_passes_options() -> None:
    assert type(make_executor("local")) is LocalExecutor
    ray_ex = make_executor("ray", ExecutorOptions(address="auto", max_in_flight=7))
    assert type(ray_ex) is RayExecutor
    assert (ray_ex.options.address, ray_ex.options.max_in_flight) == ("auto", 7)


def test_unknown_executor_lists_the_registry() -> None:
    with pytest.raises(
        ConfigError, match=r"executor.kind: unknown executor 'slurm'; known executors: local, ray"
    ):
        make_executor("slurm")
    assert sorted(EXECUTORS) == ["local", "ray"]


def test_local_executor_runs_in_order_and_records_errors() -> None:
    sc, arm = ScenarioView("s", {}), ArmView("a", {})
    contexts = [RunContext(sc, arm, seed) for seed in range(3)]

    def runner(ctx: RunContext) -> str:
        if ctx.seed == 1:
            raise SystemExit(3)
        return str(ctx.seed)

    records = list(LocalExecutor().run(runner, contexts))
    assert [r.seed for r in records] == [0, 1, 2]
    assert records[1].error is not None and records[1].error.type == "SystemExit"
    assert records[2].output == "2"


@pytest.mark.parametrize(
    ("mean", "queued", "room", "expected"),
    [
        (None, 100, 100, 1),  # nothing measured yet: one run per task
        (0.02, 400, 256, 2),  # 20 ms runs, 50 ms target
        (1e-5, 10_000, 256, 256),  # instant runs: capped by room / max_batch
        (1e-5, 40, 256, 10),  # the tail is spread over 2 workers x 2
        (5.0, 100, 100, 1),  # slow runs: one per task
        (1e-5, 10_000, 3, 3),  # never more than the room left under max_in_flight
    ],
)
def test_batch_size(mean: float | None, queued: int, room: int, expected: int) -> None:
    got = batch_size(mean, queued, 2, room, target_task_s=0.05, max_batch=256)
    assert got == expected


def test_a_ray_task_failure_keeps_its_cause_and_traceback_without_colour_codes() -> None:
    ray_exceptions = pytest.importorskip("ray.exceptions")
    from counterfact.orchestrator.engine.executors.ray_exec import _task_failure

    try:
        raise ValueError("the index is gone")
    except ValueError as cause:
        import traceback

        exc = ray_exceptions.RayTaskError("ray_batch", traceback.format_exc(), cause, pid=7)
    assert "\x1b[" in str(exc)  # what Ray gives: the task's name in colour, first
    kind, message, trace = _task_failure(exc)
    assert (kind, message) == ("ValueError", "the index is gone")
    assert trace is not None and "\x1b[" not in trace and "ValueError: the index is gone" in trace
