"""The in-process executor: runs in plan order, in this process. For tests and debugging."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from counterfact.orchestrator.engine.executors.base import Executor
from counterfact.orchestrator.engine.feed import RunFeed, as_feed
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

    def run(
        self, runner: RunnerRef, contexts: Sequence[RunContext] | RunFeed
    ) -> Iterator[RunRecord]:
        """Run each context in order in this process; stop early when asked."""
        fn = resolve_runner(runner)
        feed = as_feed(contexts)
        while not self.stop_requested:
            feed.top_up(1)
            taken = feed.take(1)
            if not taken:
                return
            yield execute_run(fn, taken[0], self.policy, LOCAL_NODE)
        feed.close()
