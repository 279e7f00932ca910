"""The sweep driver: plan -> (resume, cache) -> executor -> run store -> verdicts -> records."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from counterfact.exceptions import DegenerateBandWarning
from counterfact.orchestrator.config.resolve import ResolvedSweep
from counterfact.orchestrator.drivers.ending import Ending, watched
from counterfact.orchestrator.drivers.provenance import fingerprint_of, provenance
from counterfact.orchestrator.drivers.sequential import WavesOutcome, execute_waves
from counterfact.orchestrator.drivers.session import Session, sweep_judges
from counterfact.orchestrator.drivers.sweeptimes import SweepTimes, sweep_times
from counterfact.orchestrator.engine.calling.worker import now_iso
from counterfact.orchestrator.engine.executors.base import Executor
from counterfact.orchestrator.engine.loading.heap import judging_heap
from counterfact.orchestrator.engine.sourcing.plan import build_plan
from counterfact.orchestrator.engine.sourcing.source import RunSource
from counterfact.orchestrator.engine.sourcing.timings import SweepClock, start_executor
from counterfact.orchestrator.engine.watching.events import Logger, warn_caller
from counterfact.orchestrator.engine.watching.progress import NoProgress, Progress, live_hook
from counterfact.orchestrator.storage.recordfiles import RunLogReader
from counterfact.orchestrator.storage.rundir import RunStore
from counterfact.probes.runner import RunContext
from counterfact.probes.tally import ScenarioTally
from counterfact.records.arms import ArmVerdictRecord
from counterfact.records.execution import ExecutionRecord
from counterfact.records.paths import RunPaths
from counterfact.records.runs import RunRecord
from counterfact.records.summary import (
    JudgeRecord,
    PooledRecord,
    RollupRecord,
    ScenarioSummary,
    SequentialSummary,
    StatisticsRecord,
    SweepSummary,
)
from counterfact.records.verdicts import VerdictRecord
from counterfact.verdicts.armlevel import arm_verdicts
from counterfact.verdicts.assess import ScenarioAssessment, assess_tally
from counterfact.verdicts.family import pooled
from counterfact.verdicts.judgement import Judgement
from counterfact.verdicts.report.table import render_table, sequential_line
from counterfact.verdicts.rollup import render_pooled, render_rollup, rollup
from counterfact.verdicts.rows import verdict_rows
from counterfact.verdicts.stopped import pooled_e
from counterfact.verdicts.tiers import UnrunCause


@dataclass(frozen=True)
class SweepResult:
    """What a sweep produced.

    - ``rows``: one :class:`~counterfact.records.verdicts.VerdictRecord` per (scenario, arm),
      baseline first per scenario — the lines of ``verdicts.jsonl``;
    - ``summary``: the :class:`~counterfact.records.summary.SweepSummary` of ``summary.json``
      (provenance, run counts, per-scenario facts, statistics, roll-up);
    - ``runs``: every :class:`~counterfact.records.runs.RunRecord` (read from ``runs.jsonl``
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
        return tuple(RunLogReader(RunPaths(self.run_dir).runs))

    def to_frame(self) -> Any:
        """The rows as a pandas DataFrame: one row per (scenario, arm), nested fields flattened
        into dotted columns (``test.p_value``, ``sequential.seeds_used``); lists stay lists.

        Raises:
            ImportError: pandas is not installed (``pip install 'counterfact[data]'``).
        """
        from counterfact.orchestrator.drivers.outputs.export import records_frame

        return records_frame(self.rows, "SweepResult", VerdictRecord)

    def table(self) -> str:
        """The verdict table as text (the similarity column says which measure it shows)."""
        measure = self.summary.config.get("similarity", {}).get("kind")
        table = render_table(self.rows, similarity=measure)
        if len(self.summary.scenarios) > 1 and self.summary.rollup:
            table += "\n\n" + render_rollup(self.summary.rollup)
        if self.summary.pooled:
            table += "\n\n" + render_pooled(self.summary.pooled)
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
        RunsFailed: the runner evidently cannot work, or every run failed.
        BudgetExhausted: the budget stopped scheduling; what ran is judged.
    """
    started = now_iso()
    plan = build_plan(sweep.scenarios, sweep.arms, sweep.samples)
    tallies, shown, most = _tallies(sweep), progress or NoProgress(), _most_runs(sweep, len(plan))
    session = Session(
        sweep,
        run_dir,
        fingerprint=fingerprint_of(sweep),
        watched=watched(
            (s.id for s in sweep.scenarios), (a.id for a in sweep.arms), sweep.baseline
        ),
        executor=executor,
        fresh=fresh,
        cache_dir=cache_dir,
        sink=_sink(tallies),
        planned=most,
        show=live_hook(progress),
    )
    with session:
        times = sweep_times(run_dir, started)  # before this invocation writes its own summary
        waves = session.execute(lambda: _run(sweep, plan, tallies, session, shown))
        ending = session.ending()
        missing = _missing(ending.kind, plan, session.store)
        judged = _judge(sweep, tallies, session, shown, waves, ending) if ending.judged else None
        closed = session.close(ending, not_started=None if waves is not None else missing)
        result = _write(sweep, session, times, closed, judged)
        sequential = waves is not None
        session.conclude(
            ending, planned=most, missing=missing, sequential=sequential, result=result
        )
    return result


def _missing(kind: str, plan: list[RunContext], store: RunStore) -> int:
    """Planned runs without a record, when the sweep stopped early (else 0: none is missing)."""
    if kind not in ("interrupted", "budget"):
        return 0
    return sum(not store.has(c.scenario.id, c.arm.id, c.seed) for c in plan)


def _run(
    sweep: ResolvedSweep,
    plan: list[RunContext],
    tallies: dict[str, ScenarioTally],
    session: Session,
    progress: Progress,
) -> WavesOutcome | None:
    """Execute the plan: in waves (sequential), or what is not yet recorded of the fixed plan."""
    source, log, clock = session.source, session.log, session.clock
    if sweep.waves is not None:
        return execute_waves(sweep, tallies, source, progress, log, clock)
    _execute(sweep, plan, source, progress, log, clock)
    return None


def _most_runs(sweep: ResolvedSweep, planned: int) -> int:
    """Runs the sweep plans: the fixed plan's, or every seed up to a sequential sweep's cap."""
    if sweep.waves is None:
        return planned
    return len(sweep.scenarios) * len(sweep.arms) * sweep.waves.max_samples


def _tallies(sweep: ResolvedSweep) -> dict[str, ScenarioTally]:
    capacity = sweep.waves.max_samples if sweep.waves is not None else None
    return {
        sc.id: ScenarioTally(
            sc,
            sweep.arms,
            sweep.baseline,
            sweep.samples,
            sweep.comparator,
            sweep.similarity,
            capacity,
        )
        for sc in sweep.scenarios
    }


def _sink(tallies: dict[str, ScenarioTally]) -> Callable[[RunRecord], None]:
    """Hands each record to its scenario's tally (records of removed scenarios are ignored);
    the session counts its spend first.
    """

    def take(record: RunRecord) -> None:
        tally = tallies.get(record.scenario)
        if tally is not None:
            tally.add(record)

    return take


def _execute(
    sweep: ResolvedSweep,
    plan: list[RunContext],
    source: RunSource,
    progress: Progress,
    log: Logger,
    clock: SweepClock,
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
    start_executor(source.executor, progress, clock)
    progress.start(len(todo))
    try:
        for record in source.execute(todo):
            clock.observe(record)
            progress.advance(record.ok)
    finally:
        source.show_live()  # the bar's last line with the runs' last numbers
        progress.finish()


@dataclass(frozen=True)
class Judged:
    """What judging the tallies produced: the rows and what ``summary.json`` says of them."""

    rows: list[VerdictRecord]
    """One verdict record per (scenario, arm), baseline first per scenario."""
    scenarios: list[ScenarioSummary]
    statistics: StatisticsRecord
    arms: list[ArmVerdictRecord]
    pooled: list[PooledRecord]
    sequential: SequentialSummary | None
    rollup: list[RollupRecord]
    judges: list[JudgeRecord] | None


def _write(
    sweep: ResolvedSweep,
    session: Session,
    times: SweepTimes,
    closed: ExecutionRecord,
    judged: Judged | None,
) -> SweepResult:
    """Write ``summary.json`` (built once: provenance, what the runs came to, what was judged)
    and, when the runs were judged, ``verdicts.jsonl`` and ``arms.jsonl``.
    """
    made = provenance(sweep, times.started)
    found = {} if judged is None else {k: v for k, v in vars(judged).items() if k != "rows"}
    summary = SweepSummary.model_validate(
        {
            **dict(made),
            **times.record(made.finished_at),
            "execution": closed,
            "executor": session.executor_record(),
            "scenarios": [],
            **found,
        }
    )
    store = session.store
    if judged is not None:
        store.write_verdicts(judged.rows)
        store.write_arms(judged.arms)
    store.write_summary(summary)
    if judged is None:
        return SweepResult(rows=(), summary=summary, run_dir=store.run_dir)
    session.log.info("sweep.done", runs=closed.runs_used, failed=closed.runs_failed)
    rows = tuple(judged.rows)
    return SweepResult(rows=rows, summary=summary, kept=tuple(store.records), run_dir=store.run_dir)


def _warn_degenerate(assessed: ScenarioAssessment, scenario: str, log: Logger) -> None:
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
    session: Session,
    progress: Progress,
    waves: WavesOutcome | None,
    ending: Ending,
) -> Judged:
    """Judge every scenario's tally, then the arms over them."""
    progress.phase(f"judging {len(sweep.scenarios):,} question(s) x {len(sweep.arms)} arms")
    session.mark("judging")
    session.clock.judging_starting()
    with judging_heap():
        return _judged(sweep, tallies, session.log, waves, ending)


def _judged(
    sweep: ResolvedSweep,
    tallies: dict[str, ScenarioTally],
    log: Logger,
    waves: WavesOutcome | None,
    ending: Ending,
) -> Judged:
    judgements: list[Judgement] = []
    scenarios = []
    settings = sweep.statistics
    looks = waves.looks if waves is not None else None
    cap = waves.waves.max_samples if waves is not None else None
    # seeds without a record were never run: say why (a budget stop, or another stop)
    unrun: UnrunCause = "budget" if ending.kind == "budget" else "stopped"
    for sc in sweep.scenarios:
        finished = tallies[sc.id].finish()
        assessed = assess_tally(finished, sweep.cost_key, settings, looks, cap, unrun)
        _warn_degenerate(assessed, sc.id, log)
        judgements.extend(assessed.judgements)
        scenarios.append(assessed.summary)
    rows = verdict_rows(judgements, settings)
    # rule 18's McNemar is a fixed-sample test: a sequential sweep pools its e-values instead
    stratified = pooled(rows, settings) if waves is None else pooled_e(rows, settings)
    arms = arm_verdicts(rows, settings, stratified)
    return Judged(
        rows=rows,
        scenarios=scenarios,
        statistics=settings,
        arms=arms,
        pooled=stratified,
        sequential=waves.summary(rows, tallies) if waves is not None else None,
        rollup=rollup(rows),
        judges=[j.record() for j in sweep_judges(sweep)] or None,
    )
