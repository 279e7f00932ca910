"""``counterfact schema [config|runs|verdicts|summary|bisect]``: print a JSON Schema."""

from __future__ import annotations

import json

import click

from counterfact.orchestrator.drivers.outputs.schemas import SCHEMA_KINDS


@click.command()
@click.argument("kind", type=click.Choice(SCHEMA_KINDS), default="config")
def schema(kind: str) -> None:
    """Print the JSON Schema of KIND (default config): the sweep file, or a record kind."""
    from counterfact.orchestrator.drivers.outputs.schemas import shipped_schema

    click.echo(json.dumps(shipped_schema(kind), indent=2))
