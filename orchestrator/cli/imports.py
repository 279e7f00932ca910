"""``counterfact import inspect LOG...``: judge Inspect AI eval logs as arms of a sweep."""

from __future__ import annotations

from pathlib import Path

import click

from counterfact.defaults import ALTERNATIVE
from counterfact.exceptions import ConfigError, CounterfactError
from counterfact.orchestrator.cli.common import detail_opt, fail, fail_on_opt, finish, notes
from counterfact.orchestrator.cli.console import show


@click.group(name="import")
def import_group() -> None:
    """Judge runs made by another harness (an ordinary run directory comes out)."""


def _named(pairs: tuple[str, ...]) -> list[tuple[str, Path]]:
    out = []
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep or not name or not path:
            msg = f"--arm takes NAME=LOG, got {pair!r}"
            raise ConfigError(msg, field="--arm")
        out.append((name, Path(path)))
    return out


@import_group.command(name="inspect")
@click.argument("logs", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--arm", "arms", multiple=True, help="NAME=LOG: a log under a name of your own.")
@click.option(
    "--baseline",
    default=None,
    help="The arm to compare with: an arm's name (its task, its --arm NAME, or the folder a log "
    "of a shared task is named by), or a task several logs share (the first of them). Default: "
    "the first log.",
)
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--score", "scorer", default=None, help="The scorer to judge by (default the only one)."
)
@click.option(
    "--correct",
    multiple=True,
    help="A score value that counts as correct (repeatable; default C, 1 and true).",
)
@click.option(
    "--comparator",
    default=None,
    help="Judge the completion against the target with this comparator instead of the score "
    "(exact, contains, numeric, similarity ...).",
)
@click.option("--decide", type=click.Choice(["tiers", "test"]), default="test", show_default=True)
@click.option(
    "--alternative",
    type=click.Choice(["greater", "less", "two-sided"]),
    default=ALTERNATIVE,
    show_default=True,
)
@click.option("--fresh", is_flag=True, help="Move an existing --out aside first.")
@click.option("--no-report", "no_report", is_flag=True, help="Do not write report.html.")
@fail_on_opt
@detail_opt
def inspect_command(
    logs: tuple[Path, ...],
    arms: tuple[str, ...],
    baseline: str | None,
    out: Path,
    scorer: str | None,
    correct: tuple[str, ...],
    comparator: str | None,
    decide: str,
    alternative: str,
    fresh: bool,
    no_report: bool,
    fail_on: tuple[str, ...],
    detail: bool,
) -> None:
    """Judge Inspect AI logs: each LOG (.eval or .json) an arm named by its task, each sample id a
    scenario, each epoch a seed, paired by epoch across arms; the sample's target the reference.
    Logs of one task are named by their folders (logs/before/x.eval: before) when those differ,
    else by their file names. A run flips when its score is not correct (or, with --comparator,
    when its completion does not match the target). The logs must hold the same samples with
    the same epochs.
    """
    from counterfact.orchestrator.drivers.gating.states import cannot_fire, sweep_hits
    from counterfact.orchestrator.importers.inspect_logs import (
        CORRECT_VALUES,
        check_pairable,
        name_by_place,
        pick_baseline,
        read_arm,
    )
    from counterfact.orchestrator.importers.judge import judge_logs

    try:
        named = [(None, p) for p in logs] + list(_named(arms))
        if len(named) < 2:
            raise ConfigError("give at least two logs (a baseline and an arm)", field="LOG")
        found = [read_arm(path, name, scorer) for name, path in named]
        renamed = name_by_place(found, [name is not None for name, _ in named])
        check_pairable(found)
        chosen, note = pick_baseline(found, baseline)
        notes([*renamed, *([note] if note else [])])
        result = judge_logs(
            found,
            baseline=chosen,
            out=out,
            flip_on="comparator" if comparator else "score",
            comparator=comparator,
            correct=tuple(correct) or CORRECT_VALUES,
            statistics={"decide": decide, "alternative": alternative},
            fresh=fresh,
        )
    except CounterfactError as exc:
        fail(exc)
        return
    show(result, out, detail=detail)
    arm_level = result.summary.arms
    warning = cannot_fire(result.rows, arm_level, fail_on, result.summary.statistics)
    if warning is not None:
        click.echo(f"warning: {warning}", err=True)
    finish(out, not no_report, sweep_hits(result.rows, arm_level, fail_on))
