"""The in-process executor under a stop signal that arrives while its driver thread waits."""

from __future__ import annotations

import subprocess
import sys
import textwrap

# The driver: four runs that never finish on the shared loop; a SIGALRM handler that outlasts the
# executor's 0.1 s poll (as the graceful stop's handler does when logging on a loaded machine)
# and then asks for the stop. CPython 3.11's queue.SimpleQueue.get(timeout) waits forever after
# such a handler (its remaining timeout goes negative, which it reads as "no timeout"); the
# executor must notice the stop and return.
_DRIVER = textwrap.dedent(
    """
    import asyncio, signal, time
    from counterfact.orchestrator.engine.executors.local import LocalExecutor
    from counterfact.orchestrator.engine.executors.pooling import PoolSettings
    from counterfact.probes.runner import ArmView, RunContext, ScenarioView

    async def never(ctx):
        await asyncio.Event().wait()

    executor = LocalExecutor(pool=PoolSettings(concurrency=4))

    def slow_stop(signum, frame):
        time.sleep(0.3)
        executor.request_stop(signum)

    signal.signal(signal.SIGALRM, slow_stop)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    contexts = [RunContext(ScenarioView("s", {}), ArmView("base", {}), s) for s in range(4)]
    records = list(executor.run(never, contexts))
    print("stopped", len(records))
    """
)


def test_a_slow_signal_handler_during_the_wait_still_stops_the_sweep() -> None:
    try:
        done = subprocess.run(
            [sys.executable, "-c", _DRIVER], capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired as exc:  # run() killed the child it started
        raise AssertionError("the executor waited forever after the stop was requested") from exc
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["stopped", "0"]  # cancelled runs are not recorded
