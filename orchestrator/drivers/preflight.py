"""Before anything runs: load a sweep file, resolve it, and check its run directory.

What the CLI calls first, so that bad input and a run directory a resume would misread are
refused before any run is spent, and ``validate`` can say what a resume would do.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from counterfact.orchestrator.config.loading import load_bisect, load_sweep

if TYPE_CHECKING:  # the rest loads inside the functions: bad input is refused at once
    from counterfact.orchestrator.config.resolve import ResolvedBisect, ResolvedSweep
    from counterfact.probes.runner import RunContext
    from counterfact.records.runs import RunRecord
    from counterfact.verdicts.planning.estimate import SweepEstimate


def preflight_sweep(
    config: str,
    overrides: Sequence[str],
    executor: str | None,
    address: str | None,
    out: str | None,
    *,
    fresh: bool = False,
) -> tuple[ResolvedSweep, Path]:
    """The resolved sweep and its run directory, checked for a resume.

    Raises:
        ConfigError: the declaration is refused.
        RunDirectoryError: the run directory cannot be used as asked.
    """
    sweep = load_sweep(config, overrides=overrides, executor=executor, address=address)
    # after the file's checks: a bad file is refused before these load
    from counterfact.orchestrator.drivers.provenance import fingerprint_of
    from counterfact.orchestrator.storage.dirchecks import check_run_dir

    run_dir = sweep.run_dir_for(out)
    check_run_dir(run_dir, fingerprint_of(sweep), fresh=fresh)
    return sweep, run_dir


def preflight_bisect(
    config: str,
    overrides: Sequence[str],
    executor: str | None,
    address: str | None,
    out: str | None,
    *,
    fresh: bool = False,
) -> tuple[ResolvedBisect, Path]:
    """The resolved culprit search and its run directory, checked for a resume.

    Raises:
        ConfigError: the declaration is refused.
        RunDirectoryError: the run directory cannot be used as asked.
    """
    plan = load_bisect(config, overrides=overrides, executor=executor, address=address)
    # after the file's checks: a bad file is refused before these load
    from counterfact.orchestrator.drivers.provenance import fingerprint_of
    from counterfact.orchestrator.storage.dirchecks import check_run_dir

    run_dir = plan.sweep.run_dir_for(out, "-bisect")
    check_run_dir(run_dir, fingerprint_of(plan.sweep, [plan.base]), fresh=fresh)
    return plan, run_dir


SMOKE_TIMEOUT_S = 300.0
"""How long one smoke run may take (``validate --smoke --timeout``)."""


def smoke_runs(
    target: ResolvedSweep | ResolvedBisect, timeout_s: float = SMOKE_TIMEOUT_S
) -> list[RunRecord]:
    """Seed 0 of every arm on the first scenario — for a bisection, its baseline and every
    suspect ablated at once, the probe that touches most of the runner — run once in this
    process; nothing is written (``validate --smoke``: the contract checked before a sweep
    spends anything).

    Each run has ``timeout_s``: one that has not returned by then is recorded as a
    ``TimeoutError`` and the smoke stops there (the run is left on a daemon thread, which
    does not keep the process alive; Python cannot stop a thread).
    """
    from counterfact.orchestrator.config.resolve import ResolvedBisect
    from counterfact.orchestrator.drivers.probing import probe_arm
    from counterfact.orchestrator.engine.loading.loader import resolve_runner
    from counterfact.probes.runner import RunContext

    if isinstance(target, ResolvedBisect):
        sweep, scenario = target.sweep, target.scenario.view()
        arms = [target.base, probe_arm(target.base, target.settings.suspects)]
    else:
        sweep, scenario, arms = target, target.scenarios[0].view(), list(target.arms)
    fn = resolve_runner(sweep.runner)
    records: list[RunRecord] = []
    for arm in arms:
        record = _within(timeout_s, fn, RunContext(scenario, arm.view(), 0))
        records.append(record)
        if timed_out(record):
            break
    return records


_LATE = "the run did not return within --timeout"


def timed_out(record: RunRecord) -> bool:
    """The smoke run did not return within its deadline (not: the runner raised TimeoutError)."""
    error = record.error
    return error is not None and error.type == "TimeoutError" and error.message.startswith(_LATE)


def _within(timeout_s: float, fn: Callable[..., Any], ctx: RunContext) -> RunRecord:
    """:func:`execute_run` on a daemon thread, waited for at most ``timeout_s``."""
    from counterfact.orchestrator.engine.calling.worker import error_record, execute_run

    done: list[RunRecord] = []
    raised: list[BaseException] = []

    def run() -> None:
        try:
            done.append(execute_run(fn, ctx))
        except BaseException as exc:  # the user's abort: re-raised in this thread below
            raised.append(exc)

    worker = threading.Thread(target=run, name="smoke-run", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if raised:
        raise raised[0]
    if done:
        return done[0]
    msg = f"{_LATE} {timeout_s:g} s"
    return error_record(ctx, TimeoutError(msg), timeout_s, None)


@dataclass(frozen=True)
class Outlook:
    """What ``counterfact run`` would do with a run directory."""

    planned: int
    recorded: int
    """Records already in the directory (any plan)."""
    to_run: int
    """Planned runs without a record."""
    torn: bool
    """A resume would drop a torn last line."""


def outlook(sweep: ResolvedSweep, run_dir: Path) -> Outlook:
    """Read ``runs.jsonl`` (streamed) against the plan (a sequential sweep's plan at its cap)."""
    from counterfact.orchestrator.storage.recordfiles import RunLogReader
    from counterfact.orchestrator.storage.rundir import DoneIndex
    from counterfact.records.paths import RunPaths

    samples = sweep.max_seeds
    scenarios = {s.id for s in sweep.scenarios}
    arms = {a.id for a in sweep.arms}
    planned = len(scenarios) * len(arms) * samples
    reader, done = RunLogReader(RunPaths(run_dir).runs), DoneIndex()
    covered = 0  # planned runs with a record: counted per record, never by building the plan
    for r in reader:
        fresh = done.add((r.scenario, r.arm, r.seed))
        covered += fresh and r.scenario in scenarios and r.arm in arms and 0 <= r.seed < samples
    return Outlook(planned, done.count, planned - covered, reader.torn)


def estimate(sweep: ResolvedSweep, smoke: Sequence[RunRecord], runs: int) -> SweepEstimate:
    """Spend and wall time of ``runs`` more runs at the configured concurrency and rate limit
    (a mean over a handful of runs: an order of magnitude, not a quote), by the estimator
    ``counterfact plan`` uses too.
    """
    from counterfact.verdicts.planning.estimate import estimate_sweep, per_run

    options = sweep.executor_options
    pool, rate = options.pool, options.pool.per_minute
    cpus = options.num_cpus or os.cpu_count() or 1
    local = sweep.executor.kind == "local"
    overlapping = pool.overlapping(sweep.runner, 1 if local else cpus)
    parallel = overlapping or (1 if local else cpus)
    source = "configured" if overlapping else ("in process" if local else "one per CPU")
    return estimate_sweep(runs, per_run(smoke), float(parallel), rate, source=source)
