"""API-bound runners on a real Ray instance: worker actors, the shared throttle actor, a worker
killed mid-sweep, bisection and sequential waves with an async runner, SIGTERM and resume.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from counterfact import compare_arms, find_culprits

from ..conftest import TESTS
from ..standin import StandIn

pytestmark = pytest.mark.ray
ARMS = [{"id": "base"}, {"id": "alt", "facets": {"model": "flaky-model"}}]


def _runs(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines() if x.strip()]


def _scenarios(api: StandIn) -> list[dict[str, Any]]:
    return [{"id": "q", "inputs": {"base_url": api.base_url}, "reference": "Paris"}]


@pytest.mark.usefixtures("ray_instance")
@pytest.mark.parametrize("runner", ["io_runners.py:ask_openai", "io_runners.py:ask_httpx"])
def test_runs_overlap_on_worker_actors(runner: str, tmp_path: Path) -> None:
    import ray

    # calls of 2 s: on a loaded machine (four test workers on two cores) the workers took so
    # long to start a 0.2 s call that only 16 overlapped; at 2 s, 20 overlap at 100 ms a start
    with StandIn(median_s=2.0, p95_s=2.5) as api:
        result = compare_arms(
            ARMS,
            runner,
            base_dir=TESTS,
            samples=40,
            scenarios=_scenarios(api),
            comparator="contains",
            executor={"kind": "ray", "concurrency": 40},
            out=tmp_path / "o",
        )
    runs = _runs(tmp_path / "o")
    assert len(runs) == 80 and all(r["error"] is None for r in runs)
    assert api.stats.peak_in_flight >= 20  # many runs at once on 2 CPUs
    assert {r["node"] for r in runs} == {ray.get_runtime_context().get_node_id()}
    assert result.row("alt").flips == 20
    assert (
        result.summary.execution.concurrency is not None
        and result.summary.execution.concurrency.configured == 40
    )


@pytest.mark.usefixtures("ray_instance")
def test_one_throttle_for_every_worker_under_429s(tmp_path: Path) -> None:
    with StandIn(median_s=0.05, p95_s=0.1, max_in_flight=6, retry_after=0.05) as api:
        result = compare_arms(
            ARMS,
            "io_runners.py:ask_openai",
            base_dir=TESTS,
            samples=60,
            scenarios=_scenarios(api),
            comparator="contains",
            executor={"kind": "ray", "concurrency": 40},
            out=tmp_path / "o",
        )
    runs = _runs(tmp_path / "o")
    assert len(runs) == 120 and result.summary.execution.runs_failed == 0
    moved = result.summary.execution.concurrency
    assert moved is not None and moved.cuts >= 1 and moved.lowest < 40
    # every worker reported to the one throttle: it saw every refusal the server made
    assert moved.refusals == api.stats.refused == sum(r["rate_limited"] for r in runs) > 0


@pytest.mark.usefixtures("ray_instance")
def test_a_run_that_kills_its_worker_fails_alone(tmp_path: Path) -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        "io_runners.py:dies_on_one_seed",
        base_dir=TESTS,
        samples=8,
        reference="yes",
        executor={"kind": "ray", "concurrency": 8, "infra_retries": 1},
        out=tmp_path / "o",
    )
    runs = _runs(tmp_path / "o")
    failed = [(r["arm"], r["seed"]) for r in runs if r["error"] is not None]
    assert len(runs) == 16 and failed == [("alt", 3)]
    # runs that shared the dead actor were run again alone, and say so
    assert any(r["infra_retries"] >= 1 and r["error"] is None for r in runs)
    assert result.summary.execution.runs_failed == 1


@pytest.mark.usefixtures("ray_instance")
def test_bisection_with_an_async_runner_on_ray() -> None:
    result = find_culprits(
        ["a", "b", "c", "d"],
        "io_runners.py:async_culprit",
        base_dir=TESTS,
        samples=3,
        reference="wrong",  # what the baseline answers; ablating the culprit flips it
        inputs={"culprit": "c"},
        comparator="exact",
        executor={"kind": "ray", "concurrency": 16},
    )
    assert result.record.verdict == "confirmed" and result.record.culprits == [["c"]]
