"""``counterfact export RUN_DIR --format parquet|csv``: the records as tables for other tools."""

from __future__ import annotations

from pathlib import Path

import click

from counterfact.exceptions import CounterfactError
from counterfact.orchestrator.cli.common import fail


@click.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(["parquet", "csv"]), default="parquet", show_default=True
)
def export(run_dir: Path, fmt: str) -> None:
    """Write RUN_DIR/runs.FORMAT and verdicts.FORMAT (one row per record, dotted columns)."""
    from counterfact.orchestrator.drivers.outputs.export import export as write

    try:
        paths = write(run_dir, fmt)
    except CounterfactError as exc:
        fail(exc)
        return
    for path in paths:
        click.echo(str(path))
