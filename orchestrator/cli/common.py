"""What the CLI commands share: option declarations, loading, and the one-line error exit."""

from __future__ import annotations

import contextlib
import shlex
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import click

from counterfact.exceptions import (
    BudgetExhausted,
    CounterfactError,
    RunsFailed,
    SweepInterrupted,
    Terminated,
)
from counterfact.orchestrator.drivers.gating.states import GATE_STATES, Hit


def notes(lines: Sequence[str]) -> None:
    """Print what a resolved sweep noted (not errors) as ``note:`` lines (on stdout: stderr is
    the log stream, JSON lines off a terminal).
    """
    for line in lines:
        click.echo(f"note: {line}")


def fail(exc: CounterfactError) -> None:
    """Print the error as one line and exit with its code (:attr:`CounterfactError.exit_code`:
    2 for bad input, 1 for the engine's own failures).
    """
    click.echo(f"error: {exc}", err=True)
    sys.exit(exc.exit_code)


def resume_command(run_dir: Path) -> str:
    """This very command line, with ``--out`` pinned to ``run_dir`` and without ``--fresh``."""
    args = [a for a in sys.argv[1:] if a != "--fresh"]
    if "--out" not in args and not any(a.startswith("--out=") for a in args):
        args += ["--out", str(run_dir)]
    return " ".join(shlex.quote(a) for a in ["counterfact", *args])


GATE_EXIT = 3
"""Exit code when a ``--fail-on`` state was reached (after every record was written)."""


def over_budget(exc: BudgetExhausted[object], run_dir: Path | None, report: bool) -> NoReturn:
    """How ``run``, ``bisect`` and ``blame`` end when the spend budget stopped them, once each
    printed what the runs it bought found: the budget line, the report, exit 4.
    """
    click.echo(f"budget: {exc}", err=True)
    if run_dir is not None:
        finish(run_dir, report, [])
    sys.exit(exc.exit_code)


def finish(run_dir: Path, report: bool, hits: Sequence[Hit]) -> None:
    """Write ``report.html`` (a failure to draw it is a warning: the records stand), then apply
    ``--fail-on``: exit 3 naming what matched.
    """
    if report:
        try:
            write_report_or_warn(run_dir)
        except KeyboardInterrupt as exc:  # every record is written: only the report is missing
            click.echo(
                f"interrupted while writing report.html: every record is kept in {run_dir}; "
                f"'counterfact report {shlex.quote(str(run_dir))}' writes it",
                err=True,
            )
            sys.exit(exc.exit_code if isinstance(exc, Terminated) else 130)
    if hits:
        shown = "; ".join(map(str, hits[:10]))
        shown += f"; and {len(hits) - 10} more" if len(hits) > 10 else ""
        click.echo(f"fail-on: {len(hits)} match(es): {shown}", err=True)
        sys.exit(GATE_EXIT)


def aborted(run_dir: Path | None) -> NoReturn:
    """An interrupt ended the command at once: a second Ctrl-C (or signal) during the sweep, a
    first one before its graceful stop was in place (loading, checking, starting Ray), or
    SIGTERM / SIGHUP while no run was executing (:class:`~counterfact.exceptions.Terminated`,
    read from the exception being handled): say what is kept and how to resume, exit 130 (or
    128 + the signal; a summary may be missing: the resume rebuilds it from ``runs.jsonl``).
    Click would print ``Aborted!`` and exit 1.
    """
    from counterfact.orchestrator.engine.calling.aborting import aborting

    where = f" in {run_dir}" if run_dir is not None else ""
    resume = f": {resume_command(run_dir)}" if run_dir is not None else ""
    stopped = sys.exc_info()[1]
    if isinstance(stopped, Terminated):
        name = signal.Signals(stopped.signum).name
        click.echo(
            f"stopped by {name} while no run was executing (preparing, judging or writing the "
            f"report): every run that finished is recorded{where}; run the same command again "
            f"to judge them and write what is missing (no recorded run reruns){resume}",
            err=True,
        )
        sys.exit(stopped.exit_code)
    if aborting():
        what = "aborted at once (second interrupt): the runs that finished are recorded"
    elif run_dir is None:
        what = "interrupted while the sweep was loading: nothing was run"
    else:
        what = (
            "interrupted before the sweep's runs began or after they ended (starting Ray, "
            "shutting down): the runs that finished are recorded"
        )
    click.echo(f"{what}{where}; run the same command again to resume{resume}", err=True)
    sys.exit(130)


def ended(exc: CounterfactError, run_dir: Path | None, report: bool) -> None:
    """How ``run`` and ``bisect`` end on an error: Ctrl-C prints the resume command, then the
    report (exit 130); a failed sweep writes its report, then exits 1; anything else is one
    ``error:`` line (``run_dir`` is None when nothing got that far).
    """
    if isinstance(exc, SweepInterrupted) and run_dir is not None:
        click.echo(f"{exc}: {resume_command(run_dir)}", err=True)
        with contextlib.suppress(KeyboardInterrupt):  # a second Ctrl-C skips the report
            finish(run_dir, report, [])
        sys.exit(exc.exit_code)
    if isinstance(exc, RunsFailed) and run_dir is not None:
        finish(run_dir, report, [])
    fail(exc)


def write_report_or_warn(run_dir: Path) -> None:
    """``report.html`` into ``run_dir`` when it holds records; its path on stderr."""
    from counterfact.orchestrator.drivers.outputs.report import write_report

    if not run_dir.is_dir():
        return
    if sys.stderr.isatty():  # off a terminal stderr is the JSON log stream: an event instead
        click.echo("writing report.html…", err=True)
    else:
        from counterfact.orchestrator.engine.watching.events import get_logger

        get_logger().info("report.start", run_dir=str(run_dir))
    try:
        path = write_report(run_dir)
    except Exception as exc:  # the records stand, and --fail-on must still decide the exit
        click.echo(f"warning: report.html not written: {type(exc).__name__}: {exc}", err=True)
        return
    click.echo(f"report: {path}")  # stdout: stderr is the (JSON, off a terminal) log stream


config_arg = click.argument("config", type=click.Path(dir_okay=False, path_type=str))
report_opt = click.option(
    "--no-report", "no_report", is_flag=True, help="Do not write report.html."
)
fail_on_opt = click.option(
    "--fail-on",
    "fail_on",
    multiple=True,
    type=click.Choice(GATE_STATES),
    help="Exit 3 (after writing every record) when any challenger's arm-level verdict (over "
    "every question) — or the bisection — ends in this state: a verdict, or the test's "
    "statistical verdict ('underpowered' catches a sweep too small to test). "
    "'scenario-<state>' matches the per-question rows instead. Repeatable; 'significant' warns "
    "when no test could reach it.",
)
detail_opt = click.option(
    "--detail",
    is_flag=True,
    help="Also print the per-question verdict table and claims (always in report.html).",
)


class ExecutorChoice(click.Choice[str]):
    """The executor kinds, read from the registry (which imports the executors) only when
    ``--executor`` is parsed or its help shown: ``counterfact --help`` stays light.
    """

    def __init__(self) -> None:  # no choices yet: ``__getattr__`` reads them on first use
        self.case_sensitive = True

    def __getattr__(self, name: str) -> Any:
        if name != "choices":
            raise AttributeError(name)
        from counterfact.orchestrator.engine.executors.registry import EXECUTORS

        self.choices = tuple(sorted(EXECUTORS))
        return self.choices


executor_opt = click.option("--executor", type=ExecutorChoice(), help="Override executor.kind.")
address_opt = click.option("--address", help="Ray address to join ('auto' or host:port).")
out_opt = click.option(
    "--out", type=click.Path(file_okay=False), help="Run directory (default <output_dir>/<name>)."
)
fresh_opt = click.option(
    "--fresh",
    is_flag=True,
    help="Move an existing run directory aside (never deleted) and start anew.",
)
cache_opt = click.option(
    "--cache",
    "cache_dir",
    type=click.Path(file_okay=False),
    help="Run cache directory shared across sweeps (overrides cache_dir).",
)
set_opt = click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a config key by dotted path (repeatable), e.g. --set samples=5; the value is "
    "read as YAML. KEY=null drops the key, so its default applies (on a list index, drops that "
    "element: --set arms.3=null); quote it (KEY=\"'null'\") for the text null.",
)
