"""``counterfact bisect``: minimal culprit sets among ranked ablation ids."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from counterfact.exceptions import BudgetExhausted, CounterfactError
from counterfact.orchestrator.cli.common import (
    aborted,
    address_opt,
    cache_opt,
    config_arg,
    ended,
    executor_opt,
    fail_on_opt,
    finish,
    fresh_opt,
    notes,
    over_budget,
    report_opt,
    set_opt,
)

if TYPE_CHECKING:
    from counterfact.orchestrator.drivers.bisect import BisectResult


@click.command(name="bisect")
@config_arg
@executor_opt
@address_opt
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    help="Run directory (default <output_dir>/<name>-bisect).",
)
@set_opt
@fresh_opt
@cache_opt
@report_opt
@fail_on_opt
def bisect_command(
    config: str,
    executor: str | None,
    address: str | None,
    out: str | None,
    overrides: tuple[str, ...],
    fresh: bool,
    cache_dir: str | None,
    no_report: bool,
    fail_on: tuple[str, ...],
) -> None:
    """Find minimal culprit sets among the bisect.suspects of CONFIG (resuming its directory)
    and write report.html beside its records.
    """
    began = time.perf_counter()  # the command's wall time: a resume's search takes ~0 s
    run_dir: Path | None = None
    from counterfact.orchestrator.engine.stopping.interrupt import terminate_as_interrupt

    terminate_as_interrupt()  # SIGTERM while judging: a message and 128 + 15, not a silent death
    try:  # the imports too: a Ctrl-C while they load is an interrupt (130), not click's Abort (1)
        from counterfact.orchestrator.drivers.bisect import run_bisect
        from counterfact.orchestrator.drivers.gating.states import bisect_hits
        from counterfact.orchestrator.drivers.preflight import preflight_bisect

        plan, run_dir = preflight_bisect(config, overrides, executor, address, out, fresh=fresh)
        notes((*plan.sweep.notes, *plan.sweep.executor.notes()))
        result = run_bisect(
            plan,
            run_dir=run_dir,
            fresh=fresh,
            cache_dir=Path(cache_dir) if cache_dir else None,
        )
    except BudgetExhausted as exc:
        _over_budget(exc, run_dir, not no_report, began)
    except CounterfactError as exc:
        ended(exc, run_dir, not no_report)
        return
    except KeyboardInterrupt:
        aborted(run_dir)
    click.echo(result.report(wall_time_s=time.perf_counter() - began))
    click.echo(f"\nrecords: {run_dir}/ (runs.jsonl, bisect.json)")
    finish(run_dir, not no_report, bisect_hits(result.record, fail_on))


def _over_budget(
    exc: BudgetExhausted[BisectResult], run_dir: Path | None, report: bool, began: float
) -> NoReturn:
    """The spend budget stopped the search: what it found so far, the budget line, the report,
    exit 4 (``bisect.json`` is written; raising the budget resumes it).
    """
    if exc.result is not None:
        click.echo(exc.result.report(wall_time_s=time.perf_counter() - began))
    over_budget(exc, run_dir, report)
