"""When a sweep started and how long it took, across the invocations that ran it.

A sweep stopped (Ctrl-C, a budget, a crash) and resumed, or resumed with more samples, is one
sweep: ``summary.json``'s ``started_at`` is its first start, read from the summary the last
invocation left, and ``active_s`` adds each invocation's own time. The last invocation's start
is kept beside them (``invocation_started_at``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from counterfact.exceptions import CounterfactError
from counterfact.orchestrator.storage.recordfiles import summary_of
from counterfact.records.summary import seconds_between


class TimeFields(TypedDict):
    """``summary.json``'s time fields, as :class:`~counterfact.records.summary.SweepSummary`
    takes them.
    """

    started_at: str
    finished_at: str
    invocation_started_at: str
    invocations: int
    active_s: float


@dataclass(frozen=True)
class SweepTimes:
    """The sweep's first start and the time spent before this invocation."""

    first_started: str
    """The first invocation's start (ISO 8601)."""
    started: str
    """This invocation's start."""
    invocations: int
    """This invocation's number: 1, then one more per resume."""
    active_before_s: float
    """Seconds the earlier invocations took together."""

    def record(self, finished: str) -> TimeFields:
        """``summary.json``'s time fields for an invocation ending at ``finished``."""
        spent = seconds_between(self.started, finished) or 0.0
        return {
            "started_at": self.first_started,
            "finished_at": finished,
            "invocation_started_at": self.started,
            "invocations": self.invocations,
            "active_s": round(self.active_before_s + max(spent, 0.0), 3),
        }


def sweep_times(run_dir: Path | None, started: str) -> SweepTimes:
    """The times of a sweep whose invocation started at ``started``, continuing the summary
    ``run_dir`` holds (read before this invocation writes its own; none: a new sweep).

    A damaged or unreadable earlier summary starts the count afresh: it is rewritten at the end.
    """
    earlier = None
    if run_dir is not None:
        try:
            earlier = summary_of(run_dir)
        except (CounterfactError, OSError, ValueError):
            earlier = None
    if earlier is None:
        return SweepTimes(started, started, 1, 0.0)
    before = earlier.active_s
    if before is None:  # an older record: its own invocation's span
        before = max(seconds_between(earlier.started_at, earlier.finished_at) or 0.0, 0.0)
    return SweepTimes(earlier.started_at, started, earlier.invocations + 1, before)
