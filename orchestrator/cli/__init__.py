"""The ``counterfact`` command: a thin layer over the Python API, one module per command.

User errors print one line (``error: ...``) without a traceback and exit with code 2.

Each command's module is imported when that command runs (or its help is shown), and each
imports the engine, the verdicts and Ray inside the function that needs them: ``--help``,
``--version`` and bad input answer at once (``tests/orchestrator/cli/test_start.py``).
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
import threading
import warnings

import click

from counterfact.exceptions import CounterfactWarning

COMMANDS = {
    "run": "run:run",
    "bisect": "bisect:bisect_command",
    "blame": "blame:blame",
    "record": "record:record",
    "validate": "validate:validate",
    "report": "report:report",
    "schema": "schema:schema",
    "export": "export:export",
    "plan": "plan:plan",
    "import": "imports:import_group",
    "view": "view:view",
}
"""Each command's ``module:attribute`` under ``counterfact.orchestrator.cli``."""


class LazyGroup(click.Group):
    """A group whose commands are imported on demand (click's "Lazily Loading Subcommands")."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command's name, sorted (none imported)."""
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name``, its module imported now (None: no such command)."""
        if cmd_name not in COMMANDS:
            return super().get_command(ctx, cmd_name)
        module, attr = COMMANDS[cmd_name].split(":")
        command = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
        if not isinstance(command, click.Command):  # pragma: no cover - a wrong COMMANDS entry
            raise TypeError(f"{module}.{attr} is {type(command).__name__}, not a click command")
        return command


def _version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """``--version``: click's line, the version read only when asked."""
    if not value or ctx.resilient_parsing:
        return
    from counterfact.orchestrator.drivers.provenance import package_version

    click.echo(f"counterfact, version {package_version()}", color=ctx.color)
    ctx.exit()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_version,
    help="Show the version and exit.",
)
@click.option("-v", "--verbose", is_flag=True, help="Log debug events.")
def main(verbose: bool) -> None:
    """Seeded counterfactual reruns: which change made the answer different?"""
    from counterfact.orchestrator.engine.watching.events import set_up_before_events

    def set_up() -> None:
        from counterfact.orchestrator.cli.logs import configure_logging

        configure_logging(verbose=verbose)

    # Configured before the first event, not now: bad input is answered without structlog.
    set_up_before_events(set_up)
    click.get_current_context().call_on_close(lambda: set_up_before_events(None))
    # A CounterfactWarning is also a log event (with its category); printed by ``warnings`` too,
    # it would put a non-JSON line into the JSON log stream.
    warnings.simplefilter("ignore", CounterfactWarning)


def entry() -> None:
    """The console script: :func:`main`, then exit with its code even when a runner left threads
    running that are not daemons (they would keep the process alive after the last record), or
    a cluster join given up is still retrying inside Ray (its C++ core aborted the process,
    ``std::bad_alloc``, when the interpreter finalized under it, after the error line).
    """
    try:
        main()
        code: int = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if isinstance(exc.code, str):
            click.echo(exc.code, err=True)
    others = [t for t in threading.enumerate() if t is not threading.main_thread()]
    if others:
        from counterfact.orchestrator.engine.executors.ray_address import JOIN_THREAD

        others = [t for t in others if not t.daemon or t.name == JOIN_THREAD]
    if others:  # everything is written and flushed: do not wait for them
        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()
        os._exit(code)
    sys.exit(code)
