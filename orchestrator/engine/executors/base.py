"""The executor interface: contexts in, run records out as they finish."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Protocol

from counterfact.orchestrator.engine.calling.loops import LoopThread
from counterfact.orchestrator.engine.executors.feed import RunFeed
from counterfact.orchestrator.engine.loading.loader import RunnerRef
from counterfact.orchestrator.engine.pacing.allowance import WorkerSlots
from counterfact.orchestrator.engine.pacing.throttle import ThrottleNow
from counterfact.probes.runner import RunContext
from counterfact.records.runs import RunRecord


class ThrottleRecord(Protocol):
    """A throttle whose moves can be read: the in-process ``Throttle`` itself, or a Ray
    pool's view of its throttle actor (:class:`~.ray_pool.PoolThrottle`).
    """

    def summary(self) -> dict[str, object] | None:
        """How the limit moved (None: it could not be read)."""
        ...


@dataclass(frozen=True)
class SharedSlots:
    """The runs' own slots, on the event loop they belong to, and the throttle they report to:
    what a model judge that calls the runner's endpoint paces its calls by (one limit and one
    requests-per-minute bucket for both).
    """

    slots: WorkerSlots
    loop: LoopThread
    throttle: ThrottleRecord


@dataclass(frozen=True)
class RecordBatch:
    """Records that arrived together (one Ray task's), stored together: the run store writes and
    flushes every line of a batch before it hands any of its records on to be counted.
    """

    records: Sequence[RunRecord]
    lines: Sequence[str] | None = None
    """Each record's ``runs.jsonl`` line, when the worker already made it (from
    :func:`~counterfact.orchestrator.storage.writable.record_line`); None: the store makes them."""


class Executor(ABC):
    """Runs a plan. One method: ``run`` yields each run's record as soon as it is finished.

    The run source reads :meth:`batches` (by default ``run``'s records one by one): an executor
    whose records arrive in groups (the Ray executor, a task's) overrides it, and a subclass that
    wraps such an executor wraps ``batches``.
    """

    def __init__(self) -> None:
        self._stop = threading.Event()
        self.stop_signal: int | None = None
        """The signal that asked for the stop (SIGINT, SIGTERM, SIGHUP); None otherwise."""

    def request_stop(self, signum: int | None = None) -> None:
        """Stop scheduling new runs (Ctrl-C, or ``signum``); runs in flight may still be
        yielded.
        """
        if signum is not None and self.stop_signal is None:
            self.stop_signal = signum
        self._stop.set()

    @property
    def stop_requested(self) -> bool:
        """True once :meth:`request_stop` was called."""
        return self._stop.is_set()

    @abstractmethod
    def run(
        self, runner: RunnerRef, contexts: Sequence[RunContext] | RunFeed
    ) -> Iterator[RunRecord]:
        """Execute every context once; yield records in completion order. With a
        :class:`~counterfact.orchestrator.engine.executors.feed.RunFeed`, take runs from it as slots
        free up (the driver may add or cancel runs between records) until it stays empty.
        """

    def batches(
        self, runner: RunnerRef, contexts: Sequence[RunContext] | RunFeed
    ) -> Iterator[RecordBatch]:
        """:meth:`run`'s records in the groups they arrived in (here: one by one; the Ray
        executor yields each task's records together, with their lines).
        """
        for record in self.run(runner, contexts):
            yield RecordBatch((record,))

    def throttle_summary(self) -> dict[str, object] | None:
        """How the sweep's concurrency limit moved (None when runs did not overlap)."""
        return None

    def throttle_now(self) -> ThrottleNow | None:
        """The concurrency limit and the 429s met so far, as the driver knows them without asking
        anyone (read about once a second for ``live.json``); None when runs do not overlap.
        """
        return None

    def shared_slots(self) -> SharedSlots | None:
        """The runs' slots, for calls made in this process beside the runs (a model judge's);
        None when runs are not paced here (they do not overlap, or run in other processes).
        """
        return None

    def slots_for_judge(self) -> Callable[[], SharedSlots | None]:
        """Where a model judge of the runs' endpoint, in this process, takes its slots from,
        asked at each of its batches: :meth:`shared_slots`. Called before the first run: an
        executor whose runs are paced in other processes (Ray) reserves the judge its part of
        the runs' limit here.
        """
        return self.shared_slots

    def start_phase(self) -> str | None:
        """What :meth:`start` is about to do, when it takes a while (``starting Ray``): shown as a
        progress line; None when starting is instant (in-process).
        """
        return None

    def start(self) -> None:
        """Acquire what the executor needs (start or join Ray) before the first run is timed."""

    def close(self) -> None:
        """Release what the executor started (a local Ray instance)."""

    def __enter__(self) -> Executor:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
