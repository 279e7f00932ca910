"""Storms of 429s on Ray (issue 45 item 1): the controller cut the sweep's limit below the number
of worker actors, the actors left at zero slots held runs nobody started, and the limit grows
only on served calls, so once the actors with slots ran out of runs the sweep stalled for good.
"""

from __future__ import annotations

import threading
import time

import pytest

from counterfact.orchestrator.engine.executors.options import ExecutorOptions
from counterfact.orchestrator.engine.executors.pooling import PoolSettings
from counterfact.orchestrator.engine.executors.ray_exec import RayExecutor
from counterfact.orchestrator.engine.loading.loader import TargetRef
from counterfact.probes.runner import ArmView, RunContext, ScenarioView

from ....conftest import TESTS
from ....standin import StandIn

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("ray_instance")]
HOSTILE = TESTS / "hostile_runners.py"
PATIENCE_S = 40.0
"""The sweep is stopped after this long (it takes a few seconds; the stall was forever)."""


def test_a_sweep_through_429_storms_on_several_actors_records_every_run() -> None:
    # 4 refused in a row (a cut to 1, below the 2 actors), then 3 served, and again: never the
    # 4 clean rounds that grow the limit back to 2, so an actor at zero slots stayed there
    with StandIn(median_s=0.01, p95_s=0.02, retry_after=0.05, storm=(4, 3)) as api:
        scenario = ScenarioView("s", {"url": api.base_url})
        contexts = [
            RunContext(scenario, ArmView(arm, {}), seed) for arm in ("a", "b") for seed in range(10)
        ]
        executor = RayExecutor(ExecutorOptions(pool=PoolSettings(concurrency=2)))
        guard = threading.Timer(PATIENCE_S, executor.request_stop)
        guard.start()
        start = time.monotonic()
        try:
            records = list(executor.run(TargetRef("file", str(HOSTILE), "async_api"), contexts))
            summary = executor.throttle_summary()
        finally:
            guard.cancel()
            executor.close()
        took = time.monotonic() - start
    assert executor._actors is None and summary is not None
    assert summary["lowest"] == 1, summary  # the storm did cut below the 2 actors
    assert sorted((r.arm, r.seed) for r in records) == [(c.arm.id, c.seed) for c in contexts]
    assert [r.error for r in records if r.error is not None] == []
    assert all(r.output == "Paris" for r in records)
    assert api.stats.refused >= 8 and took < PATIENCE_S
