"""``counterfact run``: run a sweep (resuming its run directory) and print the verdict table."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from counterfact.exceptions import BudgetExhausted, CounterfactError
from counterfact.orchestrator.cli.common import (
    aborted,
    address_opt,
    cache_opt,
    config_arg,
    detail_opt,
    ended,
    executor_opt,
    fail_on_opt,
    finish,
    fresh_opt,
    notes,
    out_opt,
    over_budget,
    report_opt,
    set_opt,
)
from counterfact.orchestrator.cli.console import show

if TYPE_CHECKING:
    from counterfact.orchestrator.drivers.sweep import SweepResult


@click.command()
@config_arg
@executor_opt
@address_opt
@out_opt
@set_opt
@fresh_opt
@cache_opt
@report_opt
@fail_on_opt
@detail_opt
def run(
    config: str,
    executor: str | None,
    address: str | None,
    out: str | None,
    overrides: tuple[str, ...],
    fresh: bool,
    cache_dir: str | None,
    no_report: bool,
    fail_on: tuple[str, ...],
    detail: bool,
) -> None:
    """Run the sweep in CONFIG (resuming its run directory), print one verdict per challenger
    (over every question; --detail adds the per-question table) and write report.html beside
    its records.
    """
    run_dir: Path | None = None
    from counterfact.orchestrator.engine.stopping.interrupt import terminate_as_interrupt

    terminate_as_interrupt()  # SIGTERM while judging: a message and 128 + 15, not a silent death
    try:  # the imports too: a Ctrl-C while they load is an interrupt (130), not click's Abort (1)
        from counterfact.orchestrator.drivers.preflight import preflight_sweep

        # Bad input is refused before the engine and the verdicts (scipy) are imported.
        sweep, run_dir = preflight_sweep(config, overrides, executor, address, out, fresh=fresh)
        from counterfact.orchestrator.drivers.gating.states import cannot_fire, sweep_hits
        from counterfact.orchestrator.drivers.sweep import run_sweep
        from counterfact.orchestrator.engine.watching.progress import (
            LogProgress,
            Progress,
            TerminalProgress,
        )

        notes((*sweep.notes, *sweep.executor.notes()))
        progress: Progress = TerminalProgress() if sys.stderr.isatty() else LogProgress()
        result = run_sweep(
            sweep,
            run_dir=run_dir,
            progress=progress,
            fresh=fresh,
            cache_dir=Path(cache_dir) if cache_dir else None,
        )
    except BudgetExhausted as exc:
        _over_budget(exc, run_dir, not no_report, detail)
    except CounterfactError as exc:
        ended(exc, run_dir, not no_report)
        return
    except KeyboardInterrupt:
        aborted(run_dir)
    _resumed(result)
    show(result, run_dir, detail=detail)
    arms = result.summary.arms
    warning = cannot_fire(result.rows, arms, fail_on, result.summary.statistics)
    if warning is not None:
        click.echo(f"warning: {warning}", err=True)
    finish(run_dir, not no_report, sweep_hits(result.rows, arms, fail_on))


def _over_budget(
    exc: BudgetExhausted[SweepResult], run_dir: Path | None, report: bool, detail: bool
) -> NoReturn:
    """The budget stopped the sweep: what the runs it bought found, then the budget line, the
    report, exit 4.
    """
    if exc.result is not None and run_dir is not None:
        _resumed(exc.result)
        show(exc.result, run_dir, detail=detail)
    over_budget(exc, run_dir, report)


def _resumed(result: SweepResult) -> None:
    """What a resume read back, on stderr."""
    ran = result.summary.execution
    if ran.runs_reused or ran.runs_from_cache:
        click.echo(
            f"resumed: {ran.runs_reused} runs read back, {ran.runs_from_cache} from the "
            f"cache, {ran.runs_used} run now"
            + (" (a torn last line was dropped)" if ran.torn_line_dropped else ""),
            err=True,
        )
