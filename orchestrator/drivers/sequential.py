"""Executing a sequential sweep: the wave scheduler feeds the executor while records stream in.

The sweep driver (:mod:`counterfact.orchestrator.drivers.sweep`) calls :func:`execute_waves`
instead of executing a fixed plan when the config has a ``sequential:`` section, then judges the
tallies as always: :func:`counterfact.verdicts.assess.assess_tally` puts each arm's stopping
record (:func:`counterfact.verdicts.stopped.sequential_record`) on its row.
"""

from __future__ import annotations

from dataclasses import dataclass

from counterfact.exceptions import ExecutorError
from counterfact.orchestrator.config.resolve import ResolvedSweep
from counterfact.orchestrator.drivers.waves import WaveScheduler
from counterfact.orchestrator.engine.sourcing.source import RunSource
from counterfact.orchestrator.engine.sourcing.timings import SweepClock, start_executor
from counterfact.orchestrator.engine.watching.events import Logger
from counterfact.orchestrator.engine.watching.progress import Progress
from counterfact.probes.tally import ScenarioTally
from counterfact.records.summary import SequentialSummary
from counterfact.records.verdicts import VerdictRecord
from counterfact.verdicts.stats.sequential import Look
from counterfact.verdicts.stats.settings import Waves
from counterfact.verdicts.stopped import stopped_counts


@dataclass(frozen=True)
class WavesOutcome:
    """What the scheduler decided, for the judging step."""

    waves: Waves
    looks: dict[tuple[str, str], Look]
    cancelled: int
    """Queued runs withdrawn when their arm was decided."""

    def summary(
        self, rows: list[VerdictRecord], tallies: dict[str, ScenarioTally]
    ) -> SequentialSummary:
        """The ``sequential`` part of ``summary.json``."""
        arms = sum(len(t.arms) for t in tallies.values())
        at_cap = arms * self.waves.max_samples
        recorded = sum(
            int(a.seen.sum()) + len(a.parked) for t in tallies.values() for a in t.arms.values()
        )
        return SequentialSummary(
            max_samples=self.waves.max_samples,
            wave=self.waves.wave,
            runs_at_max_samples=at_cap,
            runs_recorded=recorded,
            runs_saved=at_cap - recorded,
            runs_cancelled=self.cancelled,
            stopped=stopped_counts(rows),
        )


def execute_waves(
    sweep: ResolvedSweep,
    tallies: dict[str, ScenarioTally],
    source: RunSource,
    progress: Progress,
    log: Logger,
    clock: SweepClock,
) -> WavesOutcome:
    """Run waves until every challenger stopped (or a stop was requested).

    Raises:
        ExecutorError: the executor ended while arms were still undecided (not a stop request).
    """
    waves = sweep.waves
    if waves is None:
        msg = "execute_waves needs a sweep with a 'sequential:' section"
        raise ValueError(msg)
    scheduler = WaveScheduler(
        sweep.scenarios, sweep.arms, sweep.baseline_arm(), tallies, source, waves
    )
    if source.store.reused:
        log.info("sweep.resume", read_back=source.store.reused)
    scheduler.start()
    if not scheduler.undecided() and not len(scheduler.feed):
        log.info("sweep.start", sequential=True, runs_at_most=0)
        return WavesOutcome(waves, scheduler.looks(), 0)  # replayed: nothing to run
    upper = len(sweep.arms) * len(sweep.scenarios) * waves.max_samples - source.store.reused
    where = str(source.store.run_dir) if source.store.run_dir else None
    log.info("sweep.start", sequential=True, runs_at_most=upper, run_dir=where)
    start_executor(source.executor, progress, clock)
    progress.start(max(upper, 0))
    try:  # under the session's graceful stop
        for record in source.execute(scheduler.feed):
            clock.observe(record)
            progress.advance(record.ok)
            if not source.executor.stop_requested:  # stopping: queue nothing new
                scheduler.advance(record.scenario)
    finally:
        source.show_live()  # the bar's last line with the runs' last numbers
        progress.finish()
    left = scheduler.undecided()
    if left and not source.executor.stop_requested and not source.budget_exhausted:
        msg = f"the executor ended with {len(left)} arm(s) still sampling, e.g. {left[0]}"
        raise ExecutorError(msg)
    for (scenario, arm), found in scheduler.looks().items():
        log.info(
            "arm.stopped", scenario=scenario, arm=arm, why=found.stopped_for, seeds=found.seeds
        )
    return WavesOutcome(waves, scheduler.looks(), scheduler.feed.cancelled)
