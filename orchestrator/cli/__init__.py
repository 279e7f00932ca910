"""The ``counterfact`` command: a thin layer over the Python API, one module per command.

User errors print one line (``error: ...``) without a traceback and exit with code 2.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import warnings

import click

from counterfact.exceptions import CounterfactWarning
from counterfact.orchestrator.cli.bisect import bisect_command
from counterfact.orchestrator.cli.blame import blame
from counterfact.orchestrator.cli.export import export
from counterfact.orchestrator.cli.imports import import_group
from counterfact.orchestrator.cli.logs import configure_logging
from counterfact.orchestrator.cli.plan import plan
from counterfact.orchestrator.cli.record import record
from counterfact.orchestrator.cli.report import report
from counterfact.orchestrator.cli.run import run
from counterfact.orchestrator.cli.schema import schema
from counterfact.orchestrator.cli.validate import validate
from counterfact.orchestrator.cli.view import view
from counterfact.orchestrator.drivers.provenance import package_version
from counterfact.orchestrator.engine.executors.ray_address import JOIN_THREAD
from counterfact.orchestrator.engine.interrupt import terminate_as_interrupt


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_version(), prog_name="counterfact")
@click.option("-v", "--verbose", is_flag=True, help="Log debug events.")
def main(verbose: bool) -> None:
    """Seeded counterfactual reruns: which change made the answer different?"""
    configure_logging(verbose=verbose)
    terminate_as_interrupt()  # SIGTERM while judging: a message and 143, not a silent death
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
    others = [
        t
        for t in threading.enumerate()
        if t is not threading.main_thread() and (not t.daemon or t.name == JOIN_THREAD)
    ]
    if others:  # everything is written and flushed: do not wait for them
        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()
        os._exit(code)
    sys.exit(code)


main.add_command(run)
main.add_command(bisect_command)
main.add_command(blame)
main.add_command(record)
main.add_command(validate)
main.add_command(report)
main.add_command(schema)
main.add_command(export)
main.add_command(plan)
main.add_command(import_group)
main.add_command(view)
