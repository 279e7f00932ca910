"""The sweep driver: plan -> executor -> run store -> verdicts -> records."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import structlog

from counterfact.exceptions import DegenerateBandWarning
from counterfact.orchestrator.executors import Executor, make_executor
from counterfact.orchestrator.plan import build_plan
from counterfact.orchestrator.progress import NoProgress, Progress
from counterfact.orchestrator.resolve import ResolvedSweep
from counterfact.orchestrator.store import RunStore
from counterfact.orchestrator.version import package_version
from counterfact.orchestrator.worker import now_iso
from counterfact.probes.records import RunRecord
from counterfact.verdicts.assess import assess_scenario
from counterfact.verdicts.records import SweepSummary, VerdictRecord
from counterfact.verdicts.report import render_table


@dataclass(frozen=True)
class SweepResult:
    """What a sweep produced: one verdict row per (scenario, arm), baseline first per scenario."""

    rows: tuple[VerdictRecord, ...]
    summary: SweepSummary
    runs: tuple[RunRecord, ...] = field(repr=False)
    """Every run record, in completion order."""
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
) -> SweepResult:
    """Run every (scenario, arm, seed) of ``sweep`` and judge the arms.

    Args:
        sweep: a resolved sweep (every refusal already passed).
        run_dir: where records go; None keeps them in memory only.
        executor: overrides the executor the config names (the caller then owns closing it).
        progress: told about each finished run.
    """
    log = structlog.get_logger().bind(sweep=sweep.config.name)
    progress = progress or NoProgress()
    store = RunStore(run_dir)
    store.open()
    started = now_iso()
    plan = build_plan(sweep.scenarios, sweep.arms, sweep.config.samples)
    log.info("sweep.start", runs=len(plan), run_dir=str(run_dir) if run_dir else None)
    owned = executor is None
    ex = executor or make_executor(sweep.config.executor)
    try:
        ex.start()
        progress.start(len(plan))
        for record in ex.run(sweep.runner, plan):
            store.append(record)
            progress.advance(record.ok)
            if record.error is not None:
                log.warning(
                    "run.failed",
                    scenario=record.scenario,
                    arm=record.arm,
                    seed=record.seed,
                    error=f"{record.error.type}: {record.error.message}"[:300],
                )
    finally:
        progress.finish()
        store.close()
        if owned:
            ex.close()
    return _judge(sweep, store, started, log)


def _judge(
    sweep: ResolvedSweep, store: RunStore, started: str, log: structlog.typing.FilteringBoundLogger
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
    summary = SweepSummary(
        name=sweep.config.name,
        config=sweep.resolved_config(),
        config_source=str(sweep.source) if sweep.source else None,
        overrides=list(sweep.overrides),
        counterfact_version=package_version(),
        started_at=started,
        finished_at=now_iso(),
        runs_used=len(runs),
        runs_failed=sum(not r.ok for r in runs),
        scenarios=scenarios,
    )
    store.write_verdicts(rows)
    store.write_summary(summary)
    log.info("sweep.done", runs=len(runs), failed=summary.runs_failed)
    return SweepResult(rows=tuple(rows), summary=summary, runs=tuple(runs), run_dir=store.run_dir)
