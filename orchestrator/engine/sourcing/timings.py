"""Where a sweep's wall-clock seconds go: start-up, execution and judging (``summary.json``
``timings``; the report's seconds are added once ``report.html`` is written).
"""

from __future__ import annotations

import time

from counterfact.orchestrator.engine.executors.base import Executor
from counterfact.orchestrator.engine.watching.progress import Progress
from counterfact.records.execution import TimingsRecord
from counterfact.records.runs import RunRecord


class SweepClock:
    """Marks the sweep's phases on a monotonic clock.

    Start-up runs from the executor's start (Ray started or joined, workers come up) until the
    first run started: the first record's arrival less its own ``duration_s`` (a driver never
    sees a run start on a worker). Execution runs from there to the last record.
    """

    def __init__(self) -> None:
        self._starting: float | None = None
        self._first: float | None = None
        self._last: float | None = None
        self._judging: float | None = None

    def executor_starting(self) -> None:
        """The executor is about to start (the first call counts; a wave does not restart it)."""
        if self._starting is None:
            self._starting = time.perf_counter()

    def observe(self, record: RunRecord) -> None:
        """A record came in from the executor."""
        now = time.perf_counter()
        if self._first is None:
            began = now - max(record.duration_s, 0.0)
            self._first = began if self._starting is None else max(self._starting, began)
        self._last = now

    def judging_starting(self) -> None:
        """Judging begins."""
        self._judging = time.perf_counter()

    def record(self) -> TimingsRecord:
        """The ``timings`` record (judging up to now, when it began)."""
        start, first, last = self._starting, self._first, self._last
        return TimingsRecord(
            startup_s=_seconds(start, first),
            execution_s=_seconds(first, last),
            judging_s=_seconds(self._judging, time.perf_counter()),
        )


def _seconds(since: float | None, until: float | None) -> float | None:
    if since is None or until is None:
        return None
    return round(max(until - since, 0.0), 4)


def start_executor(executor: Executor, progress: Progress, clock: SweepClock) -> None:
    """Start ``executor``, saying so while it comes up (``starting Ray`` on a terminal, a
    ``sweep.phase`` event off one) and starting the clock.
    """
    phase = executor.start_phase()
    if phase is not None:
        progress.phase(phase)
    clock.executor_starting()
    executor.start()
