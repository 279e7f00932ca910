"""``counterfact report RUN_DIR``: rebuild report.html from a run directory's records alone."""

from __future__ import annotations

from pathlib import Path

import click

from counterfact.exceptions import CounterfactError
from counterfact.orchestrator.cli.common import fail


@click.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
def report(run_dir: Path) -> None:
    """Write RUN_DIR/report.html from the records in RUN_DIR and print its path."""
    from counterfact.orchestrator.drivers.outputs.report import write_report

    try:
        path = write_report(run_dir)
    except CounterfactError as exc:
        fail(exc)
        return
    click.echo(str(path))
