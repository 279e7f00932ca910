"""PoolWorker's own rules, on one event loop in this process (the actor's class, not the actor):
a take after stop starts nothing, stop hands over what finished and records nothing it
cancelled, and an error of the engine's around a run is still that run's record.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from counterfact import RunContext
from counterfact.orchestrator.engine.calling.worker import NO_RETRY
from counterfact.orchestrator.engine.executors.handover import decode, ship
from counterfact.orchestrator.engine.executors.ray_pool import PoolWorker
from counterfact.orchestrator.engine.pacing.throttle import Allowance
from counterfact.probes.runner import ArmView, ScenarioView


class _Context:
    def get_node_id(self) -> str:
        return "node-1"


class _Throttle:
    class report:  # mirrors an actor handle's method (throttle.report.remote)
        @staticmethod
        async def remote(refused: int, served: int, stale: int) -> Allowance:
            return Allowance(10, None)


async def answer(ctx: RunContext) -> str:
    await asyncio.sleep(0.05 if ctx.seed == 0 else 30)  # seed 0 finishes, the rest hang
    return "yes"


def worker(monkeypatch: pytest.MonkeyPatch) -> PoolWorker:
    ray = pytest.importorskip("ray")
    monkeypatch.setattr(ray, "get_runtime_context", _Context)
    throttle: Any = _Throttle()
    return PoolWorker(
        answer, NO_RETRY, throttle, Allowance(10, None), index=0, workers=1, timeout_s=None
    )


def contexts(n: int) -> list[RunContext]:
    return [RunContext(ScenarioView("s", {}), ArmView("a", {}), seed) for seed in range(n)]


def test_stop_hands_over_what_finished_and_a_later_take_starts_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def scenario() -> tuple[int, list[int], int, bytes]:
        pool = worker(monkeypatch)
        held = await pool.take(ship(contexts(3)))
        await asyncio.sleep(0.3)  # seed 0 is done, seeds 1 and 2 still running
        handed = decode(await pool.stop()).records
        await asyncio.sleep(0)  # let the cancellations land
        late = await pool.take(ship(contexts(2)))  # Ray may deliver it after the stop
        await asyncio.sleep(0.1)
        return held, [r.seed for r in handed], late, await pool.collect(0, 0.0)

    held, seeds, late, after = asyncio.run(scenario())
    assert held == 3
    assert seeds == [0]  # the finished run is handed over; the cancelled ones are not records
    assert late == 0
    assert decode(after).records == []  # nothing ran after the stop, nothing cancelled recorded


def test_an_engine_error_around_a_run_is_that_runs_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def scenario() -> bytes:
        pool = worker(monkeypatch)

        async def broken(ctx: RunContext) -> Any:
            raise SystemExit("the engine's own failure")

        monkeypatch.setattr(pool.core, "run", broken)
        await pool.take(ship(contexts(2)))
        return await pool.collect(2, 5.0)

    records = decode(asyncio.run(scenario())).records
    assert sorted(r.seed for r in records) == [0, 1]
    assert all(r.error is not None and r.error.type == "SystemExit" for r in records)
    assert all(
        r.error is not None and r.error.message == "the engine's own failure" for r in records
    )


def test_a_run_cancelled_before_its_first_step_is_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    # a runner that cancels every task on its loop (hostile 'cancel-others') may hit a run
    # taken but not yet started: RunCore never sees that cancellation, the run was never
    # recorded, and the driver collected from the actor forever (a hang seen under load)
    async def scenario() -> list[tuple[int, str | None]]:
        pool = worker(monkeypatch)
        await pool.take(ship(contexts(2)))
        for task in list(pool._running):  # before any of them ran a step
            task.cancel()
        records = decode(await pool.collect(2, 1.0)).records
        return [(r.seed, r.error.type if r.error else None) for r in records]

    assert sorted(asyncio.run(scenario())) == [(0, "RunCancelled"), (1, "RunCancelled")]
