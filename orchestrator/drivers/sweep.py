"""The sweep driver: plan -> (resume, cache) -> executor -> run store -> verdicts -> records."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from counterfact.exceptions import (
    BudgetExhausted,
    DegenerateBandWarning,
    RunsFailed,
    SweepInterrupted,
)
from counterfact.orchestrator.config.resolve import ResolvedSweep
from counterfact.orchestrator.drivers.provenance import (
    fingerprint_of,
    open_cache,
    provenance,
)
from counterfact.orchestrator.drivers.sequential import WavesOutcome, execute_waves
from counterfact.orchestrator.engine.budget import Budget
from counterfact.orchestrator.engine.events import get_logger, warn_caller
from counterfact.orchestrator.engine.executors import (
    Executor,
    ExecutorOptions,
    PoolSettings,
    make_executor,
)
from counterfact.orchestrator.engine.failwatch import FailureWatch, all_failed_message
from counterfact.orchestrator.engine.interrupt import graceful_stop
from counterfact.orchestrator.engine.loader import RunnerRef, TargetRef
from counterfact.orchestrator.engine.plan import build_plan
from counterfact.orchestrator.engine.progress import NoProgress, Progress
from counterfact.orchestrator.engine.source import RunSource
from counterfact.orchestrator.engine.worker import RetryPolicy, now_iso
from counterfact.orchestrator.storage.rundir import RunStore
from counterfact.orchestrator.storage.runlog import RUNS_FILE, RunLogReader
from counterfact.probes.records import RunRecord
from counterfact.probes.runner import RunContext
from counterfact.probes.tally import ScenarioTally
from counterfact.verdicts.assess import ScenarioAssessment, assess_tally
from counterfact.verdicts.family import StatisticsSettings, judge_family, pooled
from counterfact.verdicts.records import (
    BudgetRecord,
    ScenarioSummary,
    SweepSummary,
    VerdictRecord,
)
from counterfact.verdicts.report import render_table, sequential_line
from counterfact.verdicts.rollup import render_rollup, rollup
from counterfact.verdicts.stopped import pooled_e, sequential_rows


@dataclass(frozen=True)
class SweepResult:
    """What a sweep produced.

    - ``rows``: one :class:`~counterfact.verdicts.records.VerdictRecord` per (scenario, arm),
      baseline first per scenario — the lines of ``verdicts.jsonl``;
    - ``summary``: the :class:`~counterfact.verdicts.records.SweepSummary` of ``summary.json``
      (provenance, run counts, per-scenario facts, statistics, roll-up);
    - ``runs``: every :class:`~counterfact.probes.records.RunRecord` (read from ``runs.jsonl``
      when there is a run directory);
    - ``to_frame()``: the rows as a pandas DataFrame; ``table()``: the text table;
      ``row(arm, scenario)``: one row.
    """

    rows: tuple[VerdictRecord, ...]
    """One verdict record per (scenario, arm), baseline first per scenario."""
    summary: SweepSummary
    """The sweep's ``summary.json``."""
    kept: tuple[RunRecord, ...] = field(default=(), repr=False)
    """The run records, when the sweep kept them in memory (no run directory)."""
    run_dir: Path | None = None

    @property
    def runs(self) -> tuple[RunRecord, ...]:
        """Every run record of the sweep (read back ones included): read from ``runs.jsonl``
        when there is a run directory (the driver does not hold them), else the kept ones.
        """
        if self.run_dir is None:
            return self.kept
        return tuple(RunLogReader(self.run_dir / RUNS_FILE))

    def to_frame(self) -> Any:
        """The rows as a pandas DataFrame: one row per (scenario, arm), nested fields flattened
        into dotted columns (``test.p_value``, ``sequential.seeds_used``); lists stay lists.

        Raises:
            ImportError: pandas is not installed (``pip install 'counterfact[data]'``).
        """
        from counterfact.orchestrator.drivers.export import records_frame

        return records_frame(self.rows, "SweepResult")

    def table(self) -> str:
        """The verdict table as text (the similarity column says which measure it shows)."""
        measure = self.summary.config.get("similarity", {}).get("kind")
        table = render_table(self.rows, similarity=measure)
        if len(self.summary.scenarios) > 1 and self.summary.rollup:
            table += "\n\n" + render_rollup(self.summary.rollup)
        return table

    def sequential_note(self) -> str | None:
        """One line on a sequential sweep (runs saved, why arms stopped); None otherwise."""
        seq = self.summary.sequential
        return sequential_line(seq) if seq is not None else None

    def row(self, arm: str, scenario: str | None = None) -> VerdictRecord:
        """The row of ``arm`` (on ``scenario``, needed when the sweep has several).

        Raises:
            KeyError: no such row, or ``scenario`` omitted on a multi-scenario sweep.
        """
        found = [r for r in self.rows if r.arm == arm and scenario in (None, r.scenario)]
        if len(found) != 1:
            msg = f"no single row for arm {arm!r} scenario {scenario!r}; {len(found)} match"
            raise KeyError(msg)
        return found[0]


def executor_for(sweep: ResolvedSweep) -> Executor:
    """The executor the sweep's ``executor:`` section names."""
    cfg = sweep.config.executor
    rate = cfg.rate_limit
    per_minute = rate.requests_per_minute
    options = ExecutorOptions(
        policy=RetryPolicy(
            retries=cfg.retries, retry_on=frozenset(cfg.retry_on), max_wait_s=rate.max_wait_s
        ),
        address=cfg.address,
        max_in_flight=cfg.max_in_flight,
        num_cpus=cfg.num_cpus,
        timeout_s=None if cfg.timeout_s is None else float(cfg.timeout_s),
        infra_retries=cfg.infra_retries,
        ship_dir=_runner_folder(sweep.runner),
        pool=PoolSettings(
            concurrency=cfg.concurrency,
            per_minute=None if per_minute is None else float(per_minute),
        ),
    )
    return make_executor(cfg.kind, options)


def _runner_folder(runner: RunnerRef) -> str | None:
    if isinstance(runner, TargetRef) and runner.kind == "file":
        return str(Path(runner.location).parent)
    return None


def run_sweep(
    sweep: ResolvedSweep,
    *,
    run_dir: Path | None,
    executor: Executor | None = None,
    progress: Progress | None = None,
    fresh: bool = False,
    cache_dir: Path | None = None,
) -> SweepResult:
    """Run every (scenario, arm, seed) of ``sweep`` not yet recorded, and judge the arms.

    Args:
        sweep: a resolved sweep (every refusal already passed).
        run_dir: where records go; None keeps them in memory only. A directory that already
            holds records is resumed: finished runs are read back, not re-executed.
        executor: overrides the executor the config names (the caller then owns closing it).
        progress: told about each finished run.
        fresh: move an existing run directory aside and start anew.
        cache_dir: the run cache (default the config's ``cache_dir``; None: no cache).

    Raises:
        ResumeConflictError: resuming would change what recorded runs mean.
        SweepInterrupted: Ctrl-C stopped the sweep; what finished is recorded.
    """
    log = get_logger(sweep=sweep.config.name)
    started = now_iso()
    plan = build_plan(sweep.scenarios, sweep.arms, sweep.config.samples)
    tallies = _tallies(sweep)
    fingerprint = fingerprint_of(sweep)
    budget = Budget(sweep.config.budget) if sweep.config.budget else None
    sink = _sink(tallies, budget)
    waves: WavesOutcome | None = None
    with RunStore(run_dir, fresh=fresh, fingerprint=fingerprint, sink=sink) as store:
        _report_store(store, log)
        ex = executor or executor_for(sweep)
        source = RunSource(sweep.runner, store, ex, open_cache(sweep, cache_dir), log)
        source.budget = budget
        source.watch = FailureWatch(
            (s.id for s in sweep.scenarios), (a.id for a in sweep.arms), sweep.baseline
        )
        try:
            if sweep.config.sequential is not None:
                waves = execute_waves(sweep, tallies, source, progress or NoProgress(), log)
            else:
                _execute(sweep, plan, source, progress or NoProgress(), log)
        finally:
            source.throttle = ex.throttle_summary()  # before close: Ray's actors hold it
            if executor is None:
                ex.close()
    if source.aborted is not None:
        _stopped_early(sweep, store, source, started, source.aborted)
    if ex.stop_requested:
        _interrupted(sweep, plan, store, source, started, sequential=waves is not None)
    result = _judge(sweep, tallies, store, source, started, log, waves)
    if store.done.count and store.failed == store.done.count:
        _all_failed(result, store, source)
    if source.budget_exhausted:
        missing = sum(not store.has(c.scenario.id, c.arm.id, c.seed) for c in plan)
        _over_budget(result, store, source, None if waves is not None else missing)
    return result


def _over_budget(
    result: SweepResult, store: RunStore, source: RunSource, missing: int | None
) -> None:
    """The budget stopped scheduling: the verdicts judge what ran; mark the summary and raise."""
    budget = source.budget
    if budget is None:  # only called once it stopped scheduling
        return
    record = budget.record() | {"runs_not_started": missing}
    summary = result.summary.model_copy(
        update={"status": "budget-exhausted", "budget": BudgetRecord.model_validate(record)}
    )
    store.write_summary(summary)
    keys = ", ".join(
        f"budget.{k} ({budget.spent[k]:g} of {budget.limits[k]:g} spent)" for k in budget.exhausted
    )
    left = "" if missing is None else f"; {missing} planned runs not started"
    msg = (
        f"budget reached: {keys}; {store.done.count} runs recorded and judged{left}. To "
        f"continue, raise {'/'.join('budget.' + k for k in budget.exhausted)} (e.g. --set "
        f"budget.{budget.exhausted[0]}=<more>) and run the same command again: recorded runs "
        "are kept, nothing runs twice"
    )
    judged = SweepResult(result.rows, summary, result.kept, result.run_dir)
    raise BudgetExhausted(msg, recorded=store.done.count, result=judged)


def _stopped_early(
    sweep: ResolvedSweep, store: RunStore, source: RunSource, started: str, reason: str
) -> None:
    """The watch stopped scheduling: record a ``failed`` summary and raise."""
    summary = _summary(sweep, store, source, started, [], status="failed")
    store.write_summary(summary.model_copy(update={"failure": reason}))
    where = f" in {store.run_dir}/runs.jsonl" if store.run_dir else ""
    msg = (
        f"stopped after {store.done.count} runs: {reason}. The runs are kept{where}, each with "
        "its traceback; fix the runner, then run again with --fresh (failed runs are finished "
        "runs: a plain resume would not retry them)"
    )
    raise RunsFailed(msg, recorded=store.done.count)


def _all_failed(result: SweepResult, store: RunStore, source: RunSource) -> None:
    """Every run failed: the records are written; mark the summary ``failed`` and raise."""
    first = source.watch.first_error if source.watch is not None else None
    reason = all_failed_message(store.done.count, first)
    summary = result.summary.model_copy(update={"status": "failed", "failure": reason})
    store.write_summary(summary)
    where = f"; see {store.run_dir}/runs.jsonl" if store.run_dir else ""
    failed = SweepResult(result.rows, summary, result.kept, result.run_dir)
    raise RunsFailed(reason + where, recorded=store.done.count, result=failed)


def statistics_of(sweep: ResolvedSweep) -> StatisticsSettings:
    """The ``statistics:`` section as the judging settings."""
    cfg = sweep.config.statistics
    return StatisticsSettings(
        alpha=float(cfg.alpha), adjust=cfg.adjust, family=cfg.family, pairing=cfg.pairing
    )


def _tallies(sweep: ResolvedSweep) -> dict[str, ScenarioTally]:
    seq = sweep.config.sequential
    capacity = seq.max_samples if seq is not None else None
    return {
        sc.id: ScenarioTally(
            sc,
            sweep.arms,
            sweep.baseline,
            sweep.config.samples,
            sweep.comparator,
            sweep.similarity,
            capacity,
        )
        for sc in sweep.scenarios
    }


def _sink(tallies: dict[str, ScenarioTally], budget: Budget | None) -> Callable[[RunRecord], None]:
    """Hands each record to its scenario's tally (records of removed scenarios are ignored) and
    counts its spend against the budget.
    """

    def take(record: RunRecord) -> None:
        if budget is not None:
            budget.observe(record)
        tally = tallies.get(record.scenario)
        if tally is not None:
            tally.add(record)

    return take


def _report_store(store: RunStore, log: Any) -> None:
    if store.moved_to is not None:
        log.warning("run_dir.moved_aside", to=str(store.moved_to))
    if store.torn:
        log.warning("runs.torn_line_dropped", note="a crash had cut the last line; dropped")


def _execute(
    sweep: ResolvedSweep,
    plan: list[RunContext],
    source: RunSource,
    progress: Progress,
    log: Any,
) -> None:
    """Split the plan into records already had and runs to execute, and execute those."""
    arms = {a.id: a for a in sweep.arms}
    reused = source.store.reused
    _, todo = source.split([(c, arms[c.arm.id]) for c in plan])
    if reused:
        log.info("sweep.resume", read_back=reused, to_run=len(todo))
    where = str(source.store.run_dir) if source.store.run_dir else None
    log.info("sweep.start", runs=len(todo), planned=len(plan), run_dir=where)
    if not todo:
        return  # everything is recorded (or cached): no executor, no Ray instance to start
    source.executor.start()
    progress.start(len(todo))
    try:
        with graceful_stop(source.executor):
            for record in source.execute(todo):
                progress.advance(record.ok)
    finally:
        progress.finish()


def _interrupted(
    sweep: ResolvedSweep,
    plan: list[RunContext],
    store: RunStore,
    source: RunSource,
    started: str,
    *,
    sequential: bool = False,
) -> None:
    missing = sum(not store.has(c.scenario.id, c.arm.id, c.seed) for c in plan)
    store.write_summary(_summary(sweep, store, source, started, [], status="interrupted"))
    # a sequential plan has no fixed size: count what the directory holds
    recorded = store.done.count if sequential else len(plan) - missing
    of = "" if sequential else f" of {len(plan)}"
    msg = (
        f"interrupted: {recorded}{of} runs recorded"
        + (f" in {store.run_dir}" if store.run_dir else "")
        + "; run the same command again to resume"
    )
    raise SweepInterrupted(msg, recorded=len(plan) - missing, planned=len(plan))


def _summary(
    sweep: ResolvedSweep,
    store: RunStore,
    source: RunSource,
    started: str,
    scenarios: list[ScenarioSummary],
    *,
    status: str = "complete",
) -> SweepSummary:
    return SweepSummary.model_validate(
        {
            "name": sweep.config.name,
            **provenance(sweep, started),
            "status": status,
            "runs_used": source.runner_calls,
            "runs_reused": store.reused,
            "runs_from_cache": source.from_cache,
            "torn_line_dropped": store.torn,
            "runs_failed": store.failed,
            "scenarios": scenarios,
            "concurrency": source.throttle,
            "budget": None if source.budget is None else source.budget.record(),
        }
    )


def _warn_degenerate(assessed: ScenarioAssessment, scenario: str, log: Any) -> None:
    """A gating band from a baseline that never varied: valid but weak, so warn (and log)."""
    band = assessed.summary.null_band
    if band is None or not (band.degenerate and band.gates):
        return
    note = (
        f"scenario {scenario!r}: the baseline's similarity never varied (all {band.floor:.3f}), "
        "so its null band has no width and any drop below it counts as outside"
    )
    warn_caller(note, DegenerateBandWarning)
    category = DegenerateBandWarning.__name__
    log.warning(
        "band.degenerate", scenario=scenario, floor=band.floor, category=category, note=note
    )


def _judge(
    sweep: ResolvedSweep,
    tallies: dict[str, ScenarioTally],
    store: RunStore,
    source: RunSource,
    started: str,
    log: Any,
    waves: WavesOutcome | None = None,
) -> SweepResult:
    rows: list[VerdictRecord] = []
    scenarios = []
    settings = statistics_of(sweep)
    for sc in sweep.scenarios:
        assessed = assess_tally(tallies[sc.id].finish(), sweep.config.cost_key, settings)
        _warn_degenerate(assessed, sc.id, log)
        rows.extend(assessed.verdicts)
        scenarios.append(assessed.summary)
    if waves is not None:
        rows = sequential_rows(rows, waves.looks, waves.waves.max_samples)
    rows = judge_family(rows, settings)
    update = {
        "statistics": settings.record(),
        # rule 18's McNemar is a fixed-sample test: a sequential sweep pools its e-values instead
        "pooled": pooled(rows, settings) if waves is None else pooled_e(rows, settings),
        "sequential": waves.summary(rows, tallies) if waves is not None else None,
        "rollup": rollup(rows),
    }
    summary = _summary(sweep, store, source, started, scenarios).model_copy(update=update)
    store.write_verdicts(rows)
    store.write_summary(summary)
    log.info("sweep.done", runs=source.runner_calls, failed=summary.runs_failed)
    kept = tuple(store.records)
    return SweepResult(rows=tuple(rows), summary=summary, kept=kept, run_dir=store.run_dir)
