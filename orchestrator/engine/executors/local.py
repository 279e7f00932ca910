"""The in-process executor: runs in plan order, in this process. For tests and debugging."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from counterfact.orchestrator.engine.executors.base import Executor
from counterfact.orchestrator.engine.loader import RunnerRef, resolve_runner
from counterfact.orchestrator.engine.worker import NO_RETRY, RetryPolicy, execute_run
from counterfact.probes.records import RunRecord
from counterfact.probes.runner import RunContext

LOCAL_NODE = "local"
"""The ``node`` of runs executed in-process."""


class LocalExecutor(Executor):
    """Runs every context in order, in-process."""

    def __init__(self, policy: RetryPolicy = NO_RETRY) -> None:
        super().__init__()
        self.policy = policy

    def run(self, runner: RunnerRef, contexts: Sequence[RunContext]) -> Iterator[RunRecord]:
        """Run each context in order in this process; stop early when asked."""
        fn = resolve_runner(runner)
        for ctx in contexts:
            if self.stop_requested:
                return
            yield execute_run(fn, ctx, self.policy, LOCAL_NODE)
