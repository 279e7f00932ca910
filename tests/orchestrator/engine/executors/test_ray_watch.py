"""An ``async def`` runner that blocks its worker actor's event loop on Ray (issue 27): no
``timeout_s`` inside that actor can fire, so the driver pings the actor, gives it up when the
ping goes unanswered, and runs its calls again alone; the run that blocks is recorded as
``EventLoopBlocked`` and the sweep ends with every run recorded.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from counterfact import compare_arms
from counterfact.orchestrator.engine.executors import ray_watch

from ....conftest import TESTS

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("ray_instance")]
HOSTILE = TESTS / "hostile_runners.py"


@pytest.mark.parametrize("what", ["block-forever", "spin"])
def test_a_runner_blocking_its_actors_loop_fails_its_run_and_the_sweep_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str
) -> None:
    # the test's patience for the ping only (3 s, not 10): a solo task keeps the engine's own
    # START_S (30 s) to start its process. A shorter one (10 s) failed innocent neighbours with a
    # second copy of the suite running.
    monkeypatch.setattr(ray_watch.ActorWatch, "confirm_s", 3.0)
    start = time.monotonic()
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        f"{HOSTILE}:async_hostile",
        scenarios=[{"id": "s", "inputs": {"what": what}, "reference": "yes"}],
        comparator="exact",
        samples=3,
        executor={"kind": "ray", "concurrency": 4, "timeout_s": 2},
        out=tmp_path / "o",
    )
    assert time.monotonic() - start < 150
    assert sorted((r.arm, r.seed) for r in result.runs) == [
        (arm, seed) for arm in ("alt", "base") for seed in range(3)
    ]
    failed = [r for r in result.runs if r.error is not None]
    said = [(r.arm, r.seed, r.error.type, r.error.message[:300]) for r in failed if r.error]
    assert [(r.arm, r.seed) for r in failed] == [("alt", 0)], said
    error = failed[0].error
    assert error is not None and error.type == "EventLoopBlocked"
    assert error.message.startswith("this run blocked the event loop the sweep's runs share")
    assert failed[0].infra_error == "EventLoopBlocked"
    assert all(r.output == "yes" for r in result.runs if r.error is None)


def test_only_the_run_that_blocks_is_blamed_when_its_actors_runs_are_sent_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 45: the given-up actor's runs were all sent again alone at once, and the solo limit
    # counts from submission: the innocent ones waiting for a worker process passed it and were
    # recorded as EventLoopBlocked beside the one that blocked (43 of them). A short START_S
    # (8 s, not 30) makes a wait for a process show here as it did on a loaded machine.
    monkeypatch.setattr(ray_watch.ActorWatch, "confirm_s", 2.0)
    monkeypatch.setattr(ray_watch, "START_S", 8.0)
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        f"{HOSTILE}:async_hostile",
        scenarios=[{"id": "s", "inputs": {"what": "block-forever"}, "reference": "yes"}],
        comparator="exact",
        samples=30,
        executor={"kind": "ray", "concurrency": 40, "timeout_s": 2},
        out=tmp_path / "o",
    )
    assert len(result.runs) == 60
    blamed = [
        (r.arm, r.seed) for r in result.runs if r.error and r.error.type == "EventLoopBlocked"
    ]
    assert blamed == [("alt", 0)], len(blamed)
    assert [r for r in result.runs if r.error and (r.arm, r.seed) != ("alt", 0)] == []
    again = [r for r in result.runs if r.infra_error == "EventLoopBlocked"]
    assert len(again) > 10  # innocent runs were on the actor given up, and were run again
