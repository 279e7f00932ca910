"""The engine on a real Ray instance (one shared per test session)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from counterfact import compare_arms
from counterfact.orchestrator.cli import main
from counterfact.orchestrator.engine.executors.options import ExecutorOptions
from counterfact.orchestrator.engine.executors.ray_exec import RayExecutor
from counterfact.orchestrator.engine.loading.loader import TargetRef
from counterfact.probes.runner import ArmView, RunContext, ScenarioView

from ....conftest import TESTS

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("ray_instance")]

QUICKSTART = TESTS.parent / "configs" / "quickstart.yaml"


def test_quickstart_on_ray_end_to_end(tmp_path: Path) -> None:
    out_dir = tmp_path / "qs"
    result = CliRunner().invoke(main, ["run", str(QUICKSTART), "--out", str(out_dir)])
    assert result.exit_code == 0, result.stderr
    verdicts = [json.loads(x) for x in (out_dir / "verdicts.jsonl").read_text().splitlines()]
    got = {v["arm"]: (v["verdict"], v["reason"]) for v in verdicts}
    assert got == {
        "baseline": (None, None),
        "stale-index": ("confirmed", "majority-flip"),
        "large-model": ("not-confirmed", "no-flip"),
        "rerank": ("inconclusive", "arm-not-applied"),
    }
    summary = json.loads((out_dir / "summary.json").read_text())
    assert (
        summary["config"]["executor"]["kind"] == "ray" and summary["execution"]["runs_used"] == 32
    )


def test_ray_and_local_give_identical_records() -> None:
    arms = [{"id": "base"}, {"id": "alt", "facets": {"answer": "nope"}}]
    kwargs = {"samples": 6, "base_dir": TESTS}
    on_ray = compare_arms(arms, "runners.py:noisy", executor="ray", **kwargs)  # type: ignore[arg-type]
    local = compare_arms(arms, "runners.py:noisy", executor="local", **kwargs)  # type: ignore[arg-type]
    assert [r.model_dump() for r in on_ray.rows] == [r.model_dump() for r in local.rows]


def test_shared_instance_survives_the_executor() -> None:
    import ray

    sc, arm = ScenarioView("s", {"sleep_s": 0.0}), ArmView("a", {})
    contexts = [RunContext(sc, arm, seed) for seed in range(50)]
    runner = TargetRef("file", str(TESTS / "runners.py"), "fails_on_odd_seeds")
    with RayExecutor(ExecutorOptions(max_in_flight=3)) as ex:
        records = list(ex.run(runner, contexts))
    assert sorted(r.seed for r in records) == list(range(50))
    assert sum(r.error is not None for r in records) == 25
    assert ray.is_initialized()
    # every record says where it ran: this one-node instance's node id, failed runs included
    assert {r.node for r in records} == {ray.get_runtime_context().get_node_id()}


def test_a_binding_in_flight_limit_is_shared_by_the_tasks() -> None:
    # max_in_flight=64 over 8 task slots (2 CPUs): 8 runs a task, not one task of 61 beside
    # tasks of a run each, which left one worker busy and the other idle
    sizes: list[int] = []

    class Sizes(RayExecutor):
        def _next_task(self, *args: object, **kwargs: object) -> object:  # type: ignore[override]
            item = super()._next_task(*args, **kwargs)  # type: ignore[arg-type]
            sizes.append(len(item.batch))
            return item

    sc, arm = ScenarioView("s", {}), ArmView("a", {})
    contexts = [RunContext(sc, arm, seed) for seed in range(3000)]
    with Sizes(ExecutorOptions(max_in_flight=64)) as ex:
        records = list(ex.run(lambda ctx: "yes", contexts))
    assert sorted(r.seed for r in records) == list(range(3000))
    assert max(sizes) == 8 and sizes.count(8) >= 0.9 * 3000 / 8  # before: 61s and many 1s


def test_closure_runner_from_python_runs_on_ray() -> None:
    suffix = "!"

    def runner(ctx: RunContext) -> str:
        return "yes" + (suffix if ctx.arm.facets.get("loud") else "")

    result = compare_arms(
        [{"id": "base"}, {"id": "loud", "facets": {"loud": True}}],
        runner,
        reference="yes",
        comparator="exact",
        executor={"kind": "ray", "max_in_flight": 2},
    )
    assert result.row("loud").verdict == "confirmed"
    assert result.row("base").flips == 0


def test_sequential_waves_on_ray_match_in_process(tmp_path: Path) -> None:
    arms = [
        {"id": "base", "facets": {"rate": 0.05}},
        {"id": "strong", "facets": {"rate": 0.9}},
        {"id": "same", "facets": {"rate": 0.05, "v": 2}},
    ]
    kwargs: dict[str, object] = {
        "samples": 4,
        "reference": "A",
        "comparator": "exact",
        "base_dir": TESTS,
        "runner_version": "v1",
        "sequential": {"max_samples": 40, "wave": 4},
    }
    on_ray = compare_arms(
        arms, "runners.py:flip_rate", executor="ray", out=tmp_path / "r", **kwargs
    )  # type: ignore[arg-type]
    local = compare_arms(arms, "runners.py:flip_rate", executor="local", **kwargs)  # type: ignore[arg-type]
    assert [r.model_dump(exclude={"runs_from_cache"}) for r in on_ray.rows] == [
        r.model_dump(exclude={"runs_from_cache"}) for r in local.rows
    ]
    lines = (tmp_path / "r" / "runs.jsonl").read_text().splitlines()
    keys = [(d["arm"], d["seed"]) for d in map(json.loads, lines)]
    assert len(keys) == len(set(keys))  # run-ahead and cancellation never run a seed twice
    strong = on_ray.row("strong").sequential
    assert strong is not None and strong.stopped_for == "significant"


def test_sequential_stop_on_ray_then_resume(tmp_path: Path) -> None:
    from collections.abc import Iterator, Sequence

    from counterfact.exceptions import SweepInterrupted
    from counterfact.orchestrator.engine.executors.base import RecordBatch
    from counterfact.orchestrator.engine.executors.feed import RunFeed

    class StopAfter(RayExecutor):
        """Requests a stop (as Ctrl-C does) once 15 records came back."""

        def batches(
            self, runner: object, contexts: Sequence[RunContext] | RunFeed
        ) -> Iterator[RecordBatch]:
            seen = 0
            for batch in super().batches(runner, contexts):  # type: ignore[arg-type]
                yield batch
                seen += len(batch.records)
                if seen >= 15:
                    self.request_stop()

    arms = [
        {"id": "base", "facets": {"rate": 0.05}},
        {"id": "same", "facets": {"rate": 0.05, "v": 2}},
    ]
    kwargs: dict[str, object] = {
        "samples": 4,
        "reference": "A",
        "comparator": "exact",
        "base_dir": TESTS,
        "runner_version": "v1",
        "sequential": {"max_samples": 40, "wave": 4},
    }
    from counterfact.orchestrator.config.loading import validate_config
    from counterfact.orchestrator.config.resolve import resolve_sweep
    from counterfact.orchestrator.drivers.sweep import run_sweep

    raw = {"name": "stop", "runner": "runners.py:flip_rate", "arms": arms, "executor": "ray"}
    raw |= {k: v for k, v in kwargs.items() if k != "base_dir"}
    sweep = resolve_sweep(validate_config(raw), base_dir=TESTS)
    out = tmp_path / "o"
    with pytest.raises(SweepInterrupted), StopAfter(ExecutorOptions(max_in_flight=4)) as ex:
        run_sweep(sweep, run_dir=out, executor=ex)
    lines = (out / "runs.jsonl").read_text().splitlines()
    keys = [(d["arm"], d["seed"]) for d in map(json.loads, lines)]
    assert len(keys) == len(set(keys)) and 15 <= len(keys) < 80  # nothing queued after the stop
    resumed = compare_arms(
        arms,
        "runners.py:flip_rate",
        executor="local",
        out=out,
        name="stop",
        **kwargs,  # type: ignore[arg-type]
    )
    whole = compare_arms(arms, "runners.py:flip_rate", executor="local", **kwargs)  # type: ignore[arg-type]
    assert resumed.row("same").sequential == whole.row("same").sequential
