"""One lifecycle for a sweep and a bisection: what surrounds planning, executing and judging.

A :class:`Session` counts what the runs spend (against the budget, when there is one) and binds
the model judges to that count; opened, it takes the run store (the run directory's lock),
builds the executor the sweep names (unless the caller passed one) and the run source with its
failure watch, and keeps them until the final records are written. The driver in between only
plans, executes (:meth:`Session.execute`: under the graceful stop, the executor closed after)
and judges; :meth:`Session.ending` says how the work ended, :meth:`Session.close` what the runs
came to (the :class:`~counterfact.records.execution.ExecutionRecord` every record kind embeds),
and :meth:`Session.conclude` raises what the ending calls for, once the driver has written its
records — still inside the lock, so a second driver can never interleave its writes with this
one's.

The endings, in the order they are checked:

- ``aborted``: the failure watch stopped scheduling (the runner evidently cannot work);
- ``interrupted``: Ctrl-C or SIGTERM stopped scheduling;
- ``all-failed``: every recorded run failed;
- ``budget``: the spend budget stopped scheduling;
- ``done``.

While open, the session keeps ``live.json``
(:mod:`~counterfact.orchestrator.engine.watching.liveticker`) with the counts of its
:class:`~counterfact.orchestrator.engine.watching.live.LiveTracker`, and writes it a last time on
the way out with the status the work ended in.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TypeVar

from counterfact.exceptions import BudgetExhausted, RunsFailed, SweepInterrupted
from counterfact.orchestrator.config.resolve import ResolvedSweep
from counterfact.orchestrator.drivers.ending import Ending, Watched
from counterfact.orchestrator.drivers.provenance import open_cache
from counterfact.orchestrator.engine.executors.base import Executor
from counterfact.orchestrator.engine.executors.registry import make_executor
from counterfact.orchestrator.engine.judging.judge import ModelJudge, judges_of
from counterfact.orchestrator.engine.pacing.budget import Budget
from counterfact.orchestrator.engine.pacing.spend import SpendTally
from counterfact.orchestrator.engine.sourcing.source import RunSource
from counterfact.orchestrator.engine.sourcing.timings import SweepClock
from counterfact.orchestrator.engine.stopping.failwatch import FailureWatch, all_failed_message
from counterfact.orchestrator.engine.stopping.interrupt import graceful_stop
from counterfact.orchestrator.engine.watching.events import Logger, get_logger
from counterfact.orchestrator.engine.watching.live import LiveTracker
from counterfact.orchestrator.engine.watching.liveticker import LiveTicker, Show
from counterfact.orchestrator.storage.rundir import RunStore
from counterfact.records.execution import (
    BudgetRecord,
    ConcurrencyRecord,
    ExecutionRecord,
)
from counterfact.records.fingerprint import Fingerprint
from counterfact.records.live import LiveStatus
from counterfact.records.paths import LIVE_FILE
from counterfact.records.runs import RunRecord

T = TypeVar("T")


def sweep_judges(sweep: ResolvedSweep) -> list[ModelJudge]:
    """The model judges the sweep's checks ask (``comparator: {kind: judge}``)."""
    return judges_of([sweep.comparator, *(sc.check(sweep.comparator) for sc in sweep.scenarios)])


def bind_judges(
    sweep: ResolvedSweep,
    run_dir: Path | None,
    spend: SpendTally,
    budget: Budget | None,
    *,
    fresh: bool,
) -> None:
    """Before the session reads runs back (they are judged then): each model judge keeps its
    judgments in ``run_dir``'s ``judge.jsonl`` (a resume asks none again) and charges ``spend``
    (``judge``) and the ``budget``. A sweep and a culprit search bind them alike.
    """

    def charge(cost: dict[str, float], arm: str | None) -> None:
        spend.charge_judge(cost, arm)
        if budget is not None:
            budget.charge(cost)

    for judge in sweep_judges(sweep):
        judge.bind(run_dir, charge, read=not fresh)


class Session:
    """The run store, executor and run source of one sweep or bisection (a context manager)."""

    def __init__(
        self,
        sweep: ResolvedSweep,
        run_dir: Path | None,
        *,
        fingerprint: Fingerprint,
        watched: Watched,
        executor: Executor | None = None,
        fresh: bool = False,
        cache_dir: Path | None = None,
        sink: Callable[[RunRecord], None] | None = None,
        keep: bool | None = None,
        planned: int | None = None,
        log: Logger | None = None,
        show: Show | None = None,
    ) -> None:
        self.sweep = sweep
        self.log = log if log is not None else get_logger(sweep=sweep.name)
        self.spend = SpendTally(watched.arms)
        """What the recorded runs cost, per watched arm, and what model judges cost."""
        self.budget = Budget(sweep.budget_limits) if sweep.budget_limits else None
        """The spend budget (None without one: a bisection refuses one)."""
        self.clock = SweepClock()
        """Where the wall-clock seconds go (start-up, execution, judging)."""
        bind_judges(sweep, run_dir, self.spend, self.budget, fresh=fresh)
        self.live = LiveTracker(
            sweep.name,
            counts=lambda: (self.store.done.count, self.store.failed),
            spend=self.spend.totals,
            budget=sweep.budget_limits,
            concurrency_max=sweep.executor_options.pool.concurrency,
        )
        """The live counts (``live.json``, the progress line's numbers)."""
        self.live.planned = planned
        self._show = show
        self._ticker: LiveTicker | None = None
        seeds = None  # a bisection re-tests on fresh seeds past samples
        if fingerprint.kind == "sweep":
            seeds = sweep.max_seeds
        self.store = RunStore(
            run_dir,
            fresh=fresh,
            fingerprint=fingerprint,
            sink=_counted(self.budget, self.spend, sink),
            keep=keep,
            seeds=seeds,
        )
        self._given = executor
        self._cache_dir = cache_dir
        self._watched = watched
        self._executor: Executor | None = None
        self._source: RunSource | None = None
        self._closed = False

    @property
    def executor(self) -> Executor:
        """The executor runs go to (built on entry)."""
        if self._executor is None:
            msg = "the session is not open; use it as 'with Session(...) as session:'"
            raise RuntimeError(msg)
        return self._executor

    @property
    def source(self) -> RunSource:
        """The run source: read back, cached or executed, each record once."""
        if self._source is None:
            msg = "the session is not open; use it as 'with Session(...) as session:'"
            raise RuntimeError(msg)
        return self._source

    def __enter__(self) -> Session:
        """Open the store (lock the directory), then build the executor and the run source."""
        self.store.__enter__()
        try:
            self._report_store()
            ex = self._given or make_executor(self.sweep.executor.kind, self.sweep.executor_options)
            self._executor = ex
            for judge in sweep_judges(self.sweep):  # the runner's endpoint: one rate control
                judge.share(
                    ex.slots_for_judge() if judge.same_endpoint(self.sweep.runner) else None
                )
            cache = open_cache(self.sweep, self._cache_dir)
            where = self.store.run_dir
            ticker = LiveTicker(
                self.live,
                ex.throttle_now,
                None if where is None else where / LIVE_FILE,
                self._show,
                log=self.log,
            )
            w = self._watched
            self._source = RunSource(
                self.sweep.runner,
                self.store,
                ex,
                cache,
                self.log,
                watch=FailureWatch(w.scenarios, w.arms, w.baseline),
                budget=self.budget,
                live=self.live,
                live_now=ticker.tick,
            )
            self._ticker = ticker
            ticker.start()
        except BaseException:
            self.store.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if self._ticker is not None:
                self._ticker.close(self._live_status(exc))
        finally:
            try:
                self._close_executor()
            finally:
                try:
                    self.store.close()
                finally:
                    self._close_judges()

    def _close_judges(self) -> None:
        """Close the model judges' clients and loops, however the sweep ended (judging is
        done inside the session; a judge used later opens them anew).
        """
        for judge in sweep_judges(self.sweep):
            judge.close()

    def mark(self, status: LiveStatus) -> None:
        """The work moved on (``judging``): ``live.json`` says so at once."""
        if self._ticker is not None:
            self._ticker.mark(status)
        else:
            self.live.mark(status)

    def _live_status(self, exc: BaseException | None) -> LiveStatus:
        """How ``live.json`` ends: ``interrupted`` (Ctrl-C, a signal), ``stopped`` (the failure
        watch, the budget, an error, a sequential sweep that stopped before its cap),
        ``finished`` (every planned run recorded and judged, all-failed ones included).
        """
        if isinstance(exc, KeyboardInterrupt | SweepInterrupted):
            return "interrupted"
        if exc is not None and not isinstance(exc, RunsFailed | BudgetExhausted):
            return "stopped"
        if self._source is None:
            return "stopped"
        kind = self.ending().kind  # the failure watch's stop is an abort, not an interrupt
        if kind == "interrupted":
            return "interrupted"
        if kind in ("aborted", "budget"):
            return "stopped"
        planned = self.live.planned
        return "stopped" if planned is not None and self.live.done < planned else "finished"

    def executor_record(self) -> dict[str, str]:
        """The ``executor`` record of ``summary.json``: the kind the runs went to, and why (an
        executor the caller passed is named by its class, chosen explicitly).
        """
        if self._given is not None:
            return {"kind": type(self._given).__name__, "chosen": "explicit"}
        return self.sweep.executor.record()

    def _report_store(self) -> None:
        if self.store.moved_to is not None:
            self.log.warning("run_dir.moved_aside", to=str(self.store.moved_to))
        if self.store.torn:
            self.log.warning(
                "runs.torn_line_dropped", note="a crash had cut the last line; dropped"
            )
        if self.store.beyond:
            self.log.warning(
                "runs.seeds_past_plan_ignored",
                records=self.store.beyond,
                note="records of seeds past this sweep's samples were ignored (kept in the file)",
            )

    def _close_executor(self) -> None:
        """Read the throttle's summary (Ray's actors hold it) and show the runs' last numbers
        (``live.json``, the progress line), then close an executor we built.
        """
        if self._closed or self._executor is None:
            return
        self._closed = True
        try:
            self.source.throttle = self._executor.throttle_summary()
            if self._ticker is not None:  # the limiter's last reading, while it is still there
                self._ticker.tick()
        finally:
            if self._given is None:
                self._executor.close()

    def execute(self, work: Callable[[], T]) -> T:
        """Run ``work`` (which feeds the executor) under the graceful stop; the executor is
        closed after it (an executor the caller passed stays open: the caller owns it).
        """
        try:
            with graceful_stop(self.executor):
                return work()
        finally:
            self._close_executor()

    def ending(self) -> Ending:
        """How the work ended (see the module docstring for the order)."""
        source, store = self.source, self.store
        if source.aborted is not None:
            return Ending("aborted", source.aborted)
        if self.executor.stop_requested:
            return Ending("interrupted")
        if store.done.count and store.failed == store.done.count:
            first = source.watch.first_error if source.watch is not None else None
            return Ending("all-failed", all_failed_message(store.done.count, first))
        if source.budget_exhausted:
            return Ending("budget")
        return Ending("done")

    def close(self, ending: Ending, *, not_started: int | None = None) -> ExecutionRecord:
        """What the session's runs came to, and how the work ended (from :meth:`ending`; a
        driver may refine it): the record ``summary.json``, ``bisect.json`` and ``blame.json``
        embed. Taken once the work is done, judging included (a model judge's calls are spend).

        Args:
            ending: how the work ended.
            not_started: planned runs without a record (None: a sequential plan has no fixed
                size); the budget record names them when the budget stopped the work.
        """
        store, source = self.store, self.source
        return ExecutionRecord(
            status=ending.status,
            failure=ending.failure,
            runs_used=source.runner_calls,
            runs_reused=store.reused,
            runs_from_cache=source.from_cache,
            runs_rate_limited=store.rate_limited,
            runs_failed=store.failed,
            cache_entries_rejected=source.cache.rejected if source.cache is not None else 0,
            torn_line_dropped=store.torn,
            concurrency=_concurrency(source.throttle),
            budget=self._budget_record(ending, not_started),
            spend=self.spend.record(),
            timings=self.clock.record(),
        )

    def _budget_record(self, ending: Ending, not_started: int | None) -> BudgetRecord | None:
        if self.budget is None:
            return None
        return self.budget.record(not_started if ending.kind == "budget" else None)

    def raise_if_stopped(self, pending: int) -> None:
        """Mid-work (between a bisection's probes): raise when scheduling was stopped.

        Raises:
            RunsFailed: the failure watch stopped scheduling.
            SweepInterrupted: Ctrl-C or SIGTERM; ``pending`` runs were not recorded.
            BudgetExhausted: the spend budget stopped the runs (a model judge's calls count).
        """
        recorded = self.store.done.count
        if self.source.aborted is not None:
            msg = f"stopped after {recorded} runs: {self.source.aborted}"
            raise RunsFailed(msg, recorded=recorded)
        if self.executor.stop_requested:
            raise SweepInterrupted(
                "interrupted during bisection; run the same command again to resume",
                recorded=recorded,
                planned=recorded + pending,
                signal=self.executor.stop_signal,
            )
        budget = self.source.budget
        if budget is not None and budget.exhausted:
            msg = (
                f"budget reached ({', '.join(budget.exhausted)}) after {recorded} runs recorded; "
                f"raise budget.{budget.exhausted[0]} and run the same command again to resume "
                "(finished runs are read back)"
            )
            raise BudgetExhausted(msg, recorded=recorded)

    def conclude(
        self,
        ending: Ending,
        *,
        planned: int = 0,
        missing: int = 0,
        sequential: bool = False,
        result: T | None = None,
    ) -> None:
        """Raise what ``ending`` calls for, after the driver wrote its records.

        Args:
            ending: from :meth:`ending`.
            planned: the runs planned: the fixed plan's, or every seed up to a sequential
                sweep's cap.
            missing: runs of the fixed plan with no record.
            sequential: the plan grows in waves: messages count what the directory holds.
            result: the judged result (a ``SweepResult``), attached to the exception
                (``all-failed``, ``budget``): ``RunsFailed[T]``, ``BudgetExhausted[T]``.

        Raises:
            RunsFailed: ``aborted`` or ``all-failed``.
            SweepInterrupted: ``interrupted``.
            BudgetExhausted: ``budget``.
        """
        store, recorded = self.store, self.store.done.count
        if ending.kind == "aborted":
            where = f" in {store.run_dir}/runs.jsonl" if store.run_dir else ""
            msg = (
                f"stopped after {recorded} runs: {ending.failure}. The runs are kept{where}, "
                "each with its traceback; fix the runner, then run again with --fresh (failed "
                "runs are finished runs: a plain resume would not retry them)"
            )
            raise RunsFailed(msg, recorded=recorded)
        if ending.kind == "interrupted":
            signum = self.executor.stop_signal
            raise _interrupted(store, planned, missing, sequential=sequential, signum=signum)
        if ending.kind == "all-failed":
            where = f"; see {store.run_dir}/runs.jsonl" if store.run_dir else ""
            raise RunsFailed(f"{ending.failure}{where}", recorded=recorded, result=result)
        if ending.kind == "budget":
            raise self._over_budget(None if sequential else missing, result)

    def _over_budget(self, missing: int | None, result: T | None) -> BudgetExhausted[T]:
        budget = self.source.budget
        if budget is None:  # pragma: no cover - the ending needs a budget
            msg = "budget ending without a budget"
            raise RuntimeError(msg)
        keys = ", ".join(
            f"budget.{k} ({budget.spent[k]:g} of {budget.limits[k]:g} spent)"
            for k in budget.exhausted
        )
        left = "" if missing is None else f"; {missing} planned runs not started"
        recorded = self.store.done.count
        msg = (
            f"budget reached: {keys}; {recorded} runs recorded and judged{left}. To "
            f"continue, raise {'/'.join('budget.' + k for k in budget.exhausted)} (e.g. --set "
            f"budget.{budget.exhausted[0]}=<more>) and run the same command again: recorded "
            "runs are kept, nothing runs twice"
        )
        return BudgetExhausted(msg, recorded=recorded, result=result)


def _interrupted(
    store: RunStore, planned: int, missing: int, *, sequential: bool, signum: int | None
) -> SweepInterrupted:
    # a sequential plan grows in waves: count what the directory holds, past the first wave too
    recorded = store.done.count if sequential else planned - missing
    of = "" if sequential else f" of {planned}"
    msg = (
        f"interrupted: {recorded}{of} runs recorded"
        + (f" in {store.run_dir}" if store.run_dir else "")
        + "; run the same command again to resume"
    )
    return SweepInterrupted(msg, recorded=recorded, planned=planned, signal=signum)


def _concurrency(throttle: dict[str, object] | None) -> ConcurrencyRecord | None:
    """The throttle's summary as a record (None: runs did not overlap)."""
    return None if throttle is None else ConcurrencyRecord.model_validate(throttle)


def _counted(
    budget: Budget | None, spend: SpendTally, sink: Callable[[RunRecord], None] | None
) -> Callable[[RunRecord], None]:
    """Counts each record's spend, against the budget and in the totals, then hands it to
    ``sink`` (the driver's: a sweep's tallies).
    """

    def take(record: RunRecord) -> None:
        if budget is not None:
            budget.observe(record)
        spend.observe(record)
        if sink is not None:
            sink(record)

    return take
