"""The sweep driver: plan -> (resume, cache) -> executor -> run store -> verdicts -> records."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import structlog

from counterfact.exceptions import DegenerateBandWarning, SweepInterrupted
from counterfact.orchestrator.executors import Executor, make_executor
from counterfact.orchestrator.identity import fingerprint
from counterfact.orchestrator.interrupt import graceful_stop
from counterfact.orchestrator.plan import build_plan
from counterfact.orchestrator.progress import NoProgress, Progress
from counterfact.orchestrator.resolve import ResolvedSweep
from counterfact.orchestrator.runs import RunSource, open_cache
from counterfact.orchestrator.store import RunStore
from counterfact.orchestrator.version import package_version
from counterfact.orchestrator.worker import now_iso
from counterfact.probes.records import RunRecord
from counterfact.verdicts.assess import assess_scenario
from counterfact.verdicts.records import ScenarioSummary, SweepSummary, VerdictRecord
from counterfact.verdicts.report import render_table


@dataclass(frozen=True)
class SweepResult:
    """What a sweep produced: one verdict row per (scenario, arm), baseline first per scenario."""

    rows: tuple[VerdictRecord, ...]
    summary: SweepSummary
    runs: tuple[RunRecord, ...] = field(repr=False)
    """Every run record of the run directory (read back ones included)."""
    run_dir: Path | None = None

    def table(self) -> str:
        """The verdict table as text."""
        return render_table(self.rows)

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
    """
    log = structlog.get_logger().bind(sweep=sweep.config.name)
    progress = progress or NoProgress()
    store = RunStore(run_dir, fresh=fresh)
    store.open(fingerprint(sweep))
    if store.moved_to is not None:
        log.warning("run_dir.moved_aside", to=str(store.moved_to))
    if store.torn:
        log.warning("runs.torn_line_dropped", note="a crash had cut the last line; dropped")
    started = now_iso()
    plan = build_plan(sweep.scenarios, sweep.arms, sweep.config.samples)
    owned = executor is None
    ex = executor or make_executor(sweep.config.executor)
    arms = {a.id: a for a in sweep.arms}
    source = RunSource(sweep, store, ex, open_cache(sweep, cache_dir), log)
    reused = store.reused
    _, todo = source.split([(c, arms[c.arm.id]) for c in plan])
    if reused:
        log.info("sweep.resume", read_back=reused, to_run=len(todo))
    log.info(
        "sweep.start", runs=len(todo), planned=len(plan), run_dir=str(run_dir) if run_dir else None
    )
    try:
        ex.start()
        progress.start(len(todo))
        with graceful_stop(ex):
            for record in source.execute(todo):
                progress.advance(record.ok)
    finally:
        progress.finish()
        store.close()
        if owned:
            ex.close()
    if ex.stop_requested:
        missing = sum(store.get(c.scenario.id, c.arm.id, c.seed) is None for c in plan)
        summary = _summary(sweep, store, source, started, [], status="interrupted")
        store.write_summary(summary)
        msg = (
            f"interrupted: {len(plan) - missing} of {len(plan)} runs recorded"
            + (f" in {run_dir}" if run_dir else "")
            + "; run the same command again to resume"
        )
        raise SweepInterrupted(msg, recorded=len(plan) - missing, planned=len(plan))
    return _judge(sweep, store, source, started, log)


def _summary(
    sweep: ResolvedSweep,
    store: RunStore,
    source: RunSource,
    started: str,
    scenarios: list[ScenarioSummary],
    *,
    status: str = "complete",
) -> SweepSummary:
    runs = store.records
    return SweepSummary.model_validate(
        {
            "name": sweep.config.name,
            "config": sweep.resolved_config(),
            "config_source": str(sweep.source) if sweep.source else None,
            "overrides": list(sweep.overrides),
            "counterfact_version": package_version(),
            "started_at": started,
            "finished_at": now_iso(),
            "status": status,
            "runs_used": source.runner_calls,
            "runs_reused": store.reused,
            "runs_from_cache": source.from_cache,
            "torn_line_dropped": store.torn,
            "runs_failed": sum(not r.ok for r in runs),
            "scenarios": scenarios,
        }
    )


def _judge(
    sweep: ResolvedSweep,
    store: RunStore,
    source: RunSource,
    started: str,
    log: structlog.typing.FilteringBoundLogger,
) -> SweepResult:
    runs = store.records
    rows: list[VerdictRecord] = []
    scenarios = []
    for sc in sweep.scenarios:
        assessed = assess_scenario(
            scenario=sc.id,
            reference=sc.reference,
            arms=sweep.arms,
            baseline=sweep.baseline,
            runs=[r for r in runs if r.scenario == sc.id],
            samples=sweep.config.samples,
            comparator=sweep.comparator,
            similarity=sweep.similarity,
            cost_key=sweep.config.cost_key,
        )
        band = assessed.summary.null_band
        if band is not None and band.degenerate and band.gates:
            log.warning(
                "band.degenerate",
                scenario=sc.id,
                floor=band.floor,
                category=DegenerateBandWarning.__name__,
                note="the baseline never varied; any drop below its floor counts as outside",
            )
        rows.extend(assessed.verdicts)
        scenarios.append(assessed.summary)
    summary = _summary(sweep, store, source, started, scenarios)
    store.write_verdicts(rows)
    store.write_summary(summary)
    log.info("sweep.done", runs=source.runner_calls, failed=summary.runs_failed)
    return SweepResult(rows=tuple(rows), summary=summary, runs=tuple(runs), run_dir=store.run_dir)
