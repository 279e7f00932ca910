"""RunCore: a run cancelled by someone other than the engine is recorded like any other run."""

from __future__ import annotations

import asyncio

from counterfact import RunContext
from counterfact.orchestrator.engine.calling.arun import RunCore
from counterfact.orchestrator.engine.calling.worker import RetryPolicy
from counterfact.orchestrator.engine.pacing.allowance import WorkerSlots
from counterfact.orchestrator.engine.pacing.throttle import Allowance
from counterfact.probes.runner import ArmView, ScenarioView
from counterfact.records.runs import RunRecord


class Flaky(Exception):
    """Retried once by the policy below."""


def test_a_foreign_cancel_keeps_the_runs_tries_and_times_its_latest_call() -> None:
    # the run waits 0.5 s for its slot, fails once (retried), then hangs until another task
    # cancels it 0.1 s into its second call: the record says RunCancelled, 2 attempts, and a
    # duration of that call (~0.1 s), not the 0.6 s since the run began (the slot wait counted)
    calls = 0

    async def runner(ctx: RunContext) -> str:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise Flaky
        await asyncio.sleep(60)
        return "never"

    async def scenario() -> RunRecord:
        async def link(refused: int, served: int, stale: int) -> Allowance:
            return Allowance(1, None)

        slots = WorkerSlots(link, Allowance(1, None))
        core = RunCore(runner, slots, RetryPolicy(retries=1, retry_on=frozenset({"Flaky"})))
        await slots.acquire()  # another run holds the only slot for 0.5 s
        ctx = RunContext(ScenarioView("s", {}), ArmView("a", {}), 0)
        run = asyncio.ensure_future(core.run(ctx))
        await asyncio.sleep(0.5)
        slots.release(served=True)
        while calls < 2:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)
        for task in asyncio.all_tasks():  # what a hostile runner does: cancel every other task
            if task is not asyncio.current_task():
                task.cancel()
        return await run

    record = asyncio.run(scenario())
    assert record.error is not None and record.error.type == "RunCancelled"
    assert record.attempts == 2
    assert record.duration_s < 0.45, record.duration_s
