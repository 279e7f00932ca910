"""A worker's slots: its share of the sweep's limit, its reports, and the per-minute bucket."""

from __future__ import annotations

import asyncio
import time

from counterfact.orchestrator.engine.pacing.allowance import WorkerSlots
from counterfact.orchestrator.engine.pacing.throttle import BURST, Allowance, Throttle


def test_the_slots_hold_their_share_of_the_limit() -> None:
    async def scenario() -> int:
        async def link(refused: int, served: int, stale: int) -> Allowance:
            return Allowance(10, None)

        slots = WorkerSlots(link, Allowance(10, None), 0, 2)  # worker 0 of 2: 5 slots
        peak = 0

        async def one() -> None:
            nonlocal peak
            await slots.acquire()
            peak = max(peak, slots.in_use)
            await asyncio.sleep(0.01)
            slots.release(served=True)

        await asyncio.gather(*(one() for _ in range(30)))
        return peak

    assert asyncio.run(scenario()) == 5


def test_refusals_are_reported_at_once_and_the_cut_shrinks_the_slots() -> None:
    throttle = Throttle(10)

    async def scenario() -> tuple[int, int]:
        async def link(refused: int, served: int, stale: int) -> Allowance:
            return throttle.report(refused, served, stale)

        slots = WorkerSlots(link, Allowance(10, None))
        for _ in range(BURST):  # back to back, nothing served between: the API is full
            epoch = await slots.acquire()
            slots.release(refused=True, epoch=epoch)
            await asyncio.sleep(0.01)  # the report runs as a task on this loop
        return slots.capacity, throttle.refused

    assert asyncio.run(scenario()) == (8, BURST)


def test_the_first_run_waits_for_the_throttles_limit_not_the_configured_one() -> None:
    throttle = Throttle(100)  # starts at 50

    async def scenario() -> int:
        async def link(refused: int, served: int, stale: int) -> Allowance:
            return throttle.report(refused, served, stale)

        slots = WorkerSlots(link, Allowance(100, None))  # what the Ray pool hands every worker
        await slots.acquire()
        return slots.capacity

    assert asyncio.run(scenario()) == 50


def test_a_call_served_after_a_cut_it_started_before_is_not_reported_as_served() -> None:
    reported: list[int] = []

    async def scenario() -> None:
        async def link(refused: int, served: int, stale: int) -> Allowance:
            reported.append(served)
            return Allowance(10, None, 1 if refused else 0)  # a refusal is met by a cut

        slots = WorkerSlots(link, Allowance(10, None))
        early, cut_by = await slots.acquire(), await slots.acquire()
        slots.release(refused=True, epoch=cut_by)
        await asyncio.sleep(0.01)  # the report comes back: epoch 1
        slots.release(served=True, epoch=early)  # started before the cut: not a sign of room
        fresh = await slots.acquire()
        slots.release(served=True, epoch=fresh)
        await asyncio.sleep(0.01)
        last = await slots.acquire()
        slots.release(refused=True, epoch=last)  # reports what is pending
        await asyncio.sleep(0.01)

    asyncio.run(scenario())
    assert sum(reported) == 1


def test_requests_per_minute_spaces_the_starts() -> None:
    async def scenario() -> float:
        async def link(refused: int, served: int, stale: int) -> Allowance:
            return Allowance(100, 600.0)

        slots = WorkerSlots(link, Allowance(100, 600.0))  # 10 per second
        started = time.monotonic()
        for _ in range(21):
            await slots.acquire()
            slots.release(served=True)
        return time.monotonic() - started

    # the bucket starts with 1 token and refills at 10 per second: the 20 starts after the
    # first take at least 2 s
    assert 1.8 <= asyncio.run(scenario()) < 5


def test_a_limit_cut_below_the_workers_leaves_each_worker_a_slot() -> None:
    # issue 45: a cut to 1 with 4 workers left workers 1-3 at zero slots; the limit grows only
    # on served calls, so a worker at zero holding runs waited forever once worker 0 was idle
    throttle = Throttle(4, start=4)

    async def scenario() -> tuple[int, list[int]]:
        async def link(refused: int, served: int, stale: int) -> Allowance:
            return throttle.report(refused, served, stale)

        workers = [WorkerSlots(link, Allowance(4, None), i, 4) for i in range(4)]
        for _ in range(3 * BURST):  # refusals back to back: cut after cut (4, 3, 2), down to 1
            epoch = await workers[0].acquire()
            workers[0].release(refused=True, epoch=epoch)
            await asyncio.sleep(0.01)
        last = workers[3]
        await asyncio.wait_for(last.acquire(), 2.0)  # nothing is served anywhere meanwhile
        return throttle.limit, [w.capacity for w in workers]

    assert asyncio.run(scenario()) == (1, [1, 1, 1, 1])
