"""A runner that blocks the event loop it shares (issue 27): ``time.sleep`` or a busy loop
inside ``async def`` never gives the loop back, so no ``timeout_s`` on it can fire. The
in-process executor notices the loop has not turned for longer than ``timeout_s``, records the
runs on it as ``EventLoopBlocked`` (naming the run that blocked it), gives the loop up and goes
on on a fresh one: the sweep finishes and records every run.

The sweeps run in CLI subprocesses under a hard timeout (a regression fails, never hangs the
suite); one runs in this process to see the abandoned loop's thread end.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from counterfact import RunContext, RunRecord, compare_arms
from counterfact.orchestrator.engine.calling.loops import process_loop

from ....conftest import TESTS
from .test_loopguard import failures, sweep

UVLOOP = TESTS / "uvloop_runners.py"
EXECUTOR = "{kind: local, concurrency: 2, timeout_s: 1}"
FIX = "await asyncio.to_thread(...)"


@pytest.mark.parametrize("what", ["block-forever", "spin"])
def test_a_runner_blocking_its_loop_fails_the_runs_on_it_and_the_sweep_goes_on(
    tmp_path: Path, what: str
) -> None:
    start = time.monotonic()
    code, err, records = sweep(tmp_path, "async_hostile", what, EXECUTOR)
    assert time.monotonic() - start < 40
    assert "Traceback" not in err, err
    assert code == 0, err
    assert len(records) == 6 and {(r["arm"], r["seed"]) for r in records} == {
        (arm, seed) for arm in ("base", "alt") for seed in range(3)
    }
    failed = {(arm, seed): (kind, msg) for arm, seed, kind, msg in failures(records)}
    kind, msg = failed.pop(("alt", 0))
    assert kind == "EventLoopBlocked"
    assert msg.startswith(
        "this run blocked the event loop the sweep's runs share for more than 1 s (timeout_s)"
    )
    assert FIX in msg and "\n" not in msg
    for kind, msg in failed.values():  # its neighbours on that loop, if any, say who did it
        assert kind == "EventLoopBlocked"
        assert msg.startswith("the run of scenario 's', arm 'alt', seed 0 blocked the event loop")
    ok = [r for r in records if r["error"] is None]
    assert len(ok) >= 6 - 2 and all(r["output"] == "yes" for r in ok)  # concurrency 2


def test_the_given_up_loop_of_a_spinning_runner_stops_and_a_fresh_one_serves() -> None:
    spinning = [True]

    async def spins_once(ctx: RunContext) -> str:
        if ctx.arm.id == "alt" and ctx.seed == 1 and spinning[0]:
            while True:
                pass
        return "yes"

    def sweep_here(samples: int, spin: bool) -> list[RunRecord]:
        spinning[0] = spin
        return list(
            compare_arms(
                [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
                spins_once,
                samples=samples,
                reference="yes",
                comparator="exact",
                executor={"kind": "local", "concurrency": 1, "timeout_s": 0.5},
            ).runs
        )

    first = process_loop()
    runs = sweep_here(3, spin=True)
    errors = {(r.arm, r.seed): r.error for r in runs if r.error is not None}
    assert list(errors) == [("alt", 1)] and errors["alt", 1].type == "EventLoopBlocked"
    assert first.abandoned and process_loop() is not first
    first.thread.join(timeout=10)  # stopped, not left spinning on a CPU
    assert not first.thread.is_alive()
    assert all(r.ok for r in sweep_here(2, spin=False))  # the fresh loop serves the next sweep


@pytest.mark.parametrize("what", ["block-forever", "spin"])
def test_a_runner_that_makes_uvloop_the_policy_is_guarded_too(tmp_path: Path, what: str) -> None:
    code, err, records = sweep(tmp_path, "loop_kind", what, EXECUTOR, runners=UVLOOP)
    assert "Traceback" not in err and code == 0, err
    assert len(records) == 6
    failed = {(arm, seed): kind for arm, seed, kind, _ in failures(records)}
    assert failed.pop(("alt", 0)) == "EventLoopBlocked"
    assert set(failed.values()) <= {"EventLoopBlocked"}
    ok = [r for r in records if r["error"] is None]
    assert ok and {r["output"] for r in ok} == {"uvloop"}  # it did run on uvloop


def test_an_abandoned_loops_pending_runs_are_collected_without_a_stderr_note(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # asyncio logs "Task was destroyed but it is pending!" (logger "asyncio", ERROR) when a
    # task of a loop that no longer runs is collected: an abandoned loop's runs are given up on
    # purpose and recorded as failed, so that line is noise on the user's terminal.
    import asyncio
    import gc

    from counterfact.orchestrator.engine.calling.loops import LoopAbandoned, LoopThread

    loop = LoopThread(name="test-abandoned")
    started = loop.submit(asyncio.sleep(3600))
    time.sleep(0.2)  # the task is pending on the loop
    loop.abandon()
    loop.thread.join(timeout=10)
    assert not loop.thread.is_alive()
    with caplog.at_level("ERROR", logger="asyncio"):
        del started
        for task in asyncio.all_tasks(loop.loop):
            task.__del__()  # what collecting it does (the loop itself keeps it referenced)
        gc.collect()
        # the run a LoopAbandoned stopped: its task's exception is never read either
        stopped = {"message": "Task exception was never retrieved", "exception": LoopAbandoned()}
        loop.loop.call_exception_handler(stopped)
        loop.loop.call_exception_handler({"message": "something else"})  # still said
    assert [r.getMessage() for r in caplog.records] == ["something else"]
    loop.loop.close()
