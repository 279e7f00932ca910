"""``counterfact plan RUN_DIR``: how many samples to buy, from a pilot run directory."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from counterfact.exceptions import CounterfactError
from counterfact.orchestrator.cli.common import fail

if TYPE_CHECKING:
    from counterfact.records.vocabulary import Alternative


@click.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--power",
    type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
    default=0.8,
    show_default=True,
    help="The chance of a significant test the plan asks for.",
)
@click.option(
    "--effect",
    type=click.FloatRange(0.0, 1.0, min_open=True),
    default=None,
    help=(
        "Plan for this flip-rate difference (arm minus baseline) instead of the pilot's "
        "bounded effect."
    ),
)
@click.option(
    "--concurrency",
    type=click.FloatRange(1.0),
    default=None,
    help=(
        "Runs in flight at once for the wall-time estimate (default: the sweep's "
        "executor.concurrency, else what the pilot achieved)."
    ),
)
@click.option(
    "--alternative",
    type=click.Choice(["greater", "less", "two-sided"]),
    default=None,
    help=(
        "Plan for this direction instead of the pilot's statistics.alternative (less: the arm "
        "fixes); set the same for the sweep."
    ),
)
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
def plan(
    run_dir: Path,
    power: float,
    effect: float | None,
    concurrency: float | None,
    alternative: Alternative | None,
    as_json: bool,
) -> None:
    """Samples per arm that reach --power under the pilot sweep's own test, adjustment and
    direction, with the runs, spend and wall time they imply.
    """
    from counterfact.orchestrator.cli.plan_text import render_plan
    from counterfact.orchestrator.drivers.plan import plan_sweep

    try:
        found = plan_sweep(
            run_dir,
            power=power,
            effect=effect,
            concurrency=concurrency,
            alternative=alternative,
            process_startup_s=process_age_s(),
        )
    except CounterfactError as exc:
        fail(exc)
        return
    click.echo(found.model_dump_json(indent=2) if as_json else render_plan(found))


def process_age_s() -> float:
    """This process's age in seconds, read once the planning code is imported: the command's
    start-up (interpreter and imports; issue 43 item 8). On Linux the wall time since the
    process started (``/proc/self/stat`` field 22, in clock ticks since boot, against
    ``/proc/uptime``); elsewhere its CPU time so far (``time.process_time``, a lower bound).
    """
    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime", encoding="ascii") as fh:
            uptime = float(fh.read().split()[0])
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22 is the 20th after ")"
    except (OSError, ValueError, IndexError):  # not Linux, or /proc unreadable
        return time.process_time()
    return max(uptime - started, 0.0)
