"""``counterfact validate``: check a sweep file without running anything."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from counterfact.exceptions import CounterfactError
from counterfact.orchestrator.cli.common import (
    address_opt,
    config_arg,
    executor_opt,
    fail,
    out_opt,
    set_opt,
)

if TYPE_CHECKING:
    from counterfact.orchestrator.config.resolve import ResolvedBisect, ResolvedSweep
    from counterfact.records.runs import RunRecord


@click.command()
@config_arg
@executor_opt
@address_opt
@out_opt
@set_opt
@click.option("--bisect", "for_bisect", is_flag=True, help="Validate for 'counterfact bisect'.")
@click.option(
    "--smoke",
    is_flag=True,
    help="Also run seed 0 of each arm once, in this process (nothing written), to check the "
    "runner contract before a sweep spends anything, and estimate the sweep's spend and wall "
    "time from those runs.",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(min=0, min_open=True),
    default=300.0,
    show_default=True,
    metavar="SECONDS",
    help="With --smoke: how long one smoke run may take. A run past it is reported in one line "
    "and validate exits 1, as for a failed smoke run (the runner's failure; 2 is for bad "
    "input); the runs after it are not started.",
)
def validate(
    config: str,
    executor: str | None,
    address: str | None,
    out: str | None,
    overrides: tuple[str, ...],
    for_bisect: bool,
    smoke: bool,
    timeout_s: float,
) -> None:
    """Check CONFIG (schema, refusals, runner import, run directory) without running anything
    (with --smoke: one run per arm, in this process).
    """
    from counterfact.orchestrator.drivers.preflight import preflight_bisect, preflight_sweep

    try:
        if for_bisect:
            plan, run_dir = preflight_bisect(config, overrides, executor, address, out)
            _bisect_ok(plan, run_dir)
        else:
            sweep, run_dir = preflight_sweep(config, overrides, executor, address, out)
            _sweep_ok(sweep, run_dir)
    except CounterfactError as exc:
        fail(exc)
        return
    if smoke:
        records = _smoke(plan if for_bisect else sweep, timeout_s)
        if not for_bisect:
            _estimate(sweep, run_dir, records)


def _estimate(sweep: ResolvedSweep, run_dir: Path, smoke: list[RunRecord]) -> None:
    """The sweep's spend and wall time, judged from the smoke runs."""
    from counterfact.orchestrator.drivers.preflight import estimate, outlook
    from counterfact.verdicts.planning.estimate import amount, estimate_text

    seen = outlook(sweep, run_dir)
    found = estimate(sweep, smoke, seen.to_run)
    line = estimate_text(found, at_most=sweep.waves is not None)
    click.echo(f"estimate for the runs to go: {line} (from {len(smoke)} smoke runs)")
    for key, limit in sweep.budget_limits.items():
        if found.spend.get(key, 0.0) > limit:
            click.echo(
                f"note: budget.{key}={limit:g} is below the estimate "
                f"({amount(key, found.spend[key])}): the sweep would stop early (exit 4)"
            )


def _smoke(target: ResolvedSweep | ResolvedBisect, timeout_s: float) -> list[RunRecord]:
    """Run seed 0 of every arm (of a bisection: its baseline and every suspect ablated at
    once) on the first scenario; exit 1 if any run failed or outlasted ``timeout_s``.
    """
    from counterfact.orchestrator.drivers.preflight import smoke_runs, timed_out

    failed = 0
    records = smoke_runs(target, timeout_s)
    for record in records:
        if record.error is None:
            output = (record.output or "")[:60]
            click.echo(f"smoke: arm {record.arm!r}: ok ({record.duration_s:.2f} s): {output!r}")
            continue
        failed += 1
        click.echo(f"smoke: arm {record.arm!r}: {record.error.type}: {record.error.message}")
    if records and timed_out(records[-1]):
        click.echo(
            f"error: --smoke: arm {records[-1].arm!r} did not finish within --timeout "
            f"{timeout_s:g} s (a hang?); fix the runner, or give it longer with --timeout",
            err=True,
        )
        raise SystemExit(1)
    if failed:
        click.echo(f"error: --smoke: {failed} arm(s) failed their run; see above", err=True)
        raise SystemExit(1)
    return records


def _bisect_ok(plan: ResolvedBisect, run_dir: Path) -> None:
    settings, sweep = plan.settings, plan.sweep
    click.echo(
        f"ok: bisect {sweep.name!r}: {len(settings.suspects)} suspects, at most "
        f"{settings.max_probes} probes x {sweep.samples} samples = "
        f"{settings.max_probes * sweep.samples} runs on executor "
        f"{plan.sweep.executor.kind!r}; records would go to {run_dir}/"
    )


def _identity(sweep: ResolvedSweep) -> str:
    """What the runner's identity (resume, cache) covers, in one line."""
    from counterfact.orchestrator.runners.chat import ChatRunner

    if sweep.runner_version is not None:
        what = f"runner_version {sweep.runner_version!r}"
    elif isinstance(sweep.runner, ChatRunner):
        what = "the chat runner's settings and endpoint"
    else:
        what = "the runner's module source"
    if sweep.runner_files:
        names = ", ".join(name for name, _ in sweep.runner_files[:8])
        more = f" and {len(sweep.runner_files) - 8} more" if len(sweep.runner_files) > 8 else ""
        what += f" + {len(sweep.runner_files)} runner_files ({names}{more})"
    elif not isinstance(sweep.runner, ChatRunner):  # it reads no files of its own
        what += "; no runner_files (data the runner reads is not covered)"
    return f"{what} -> {sweep.runner_identity}"


def _sweep_ok(sweep: ResolvedSweep, run_dir: Path) -> None:
    from counterfact.orchestrator.drivers.preflight import outlook

    for skipped in sweep.skipped:
        click.echo(f"note: grid combination {skipped!r} equals a declared arm; skipped")
    for line in sweep.notes:
        click.echo(f"note: {line}")
    seen = outlook(sweep, run_dir)
    waves = sweep.waves
    most = "at most " if waves is not None else ""
    if seen.recorded:
        click.echo(
            f"note: {run_dir}/ holds {seen.recorded} recorded runs; run would resume them and "
            f"execute {most}{seen.to_run} more"
            + (" (a torn last line would be dropped)" if seen.torn else "")
        )
    samples = f"{sweep.samples} samples"
    if waves is not None:
        samples += f" then waves of {waves.wave} up to {waves.max_samples} (sequential)"
    click.echo(
        f"ok: sweep {sweep.name!r}: {len(sweep.arms)} arms (baseline {sweep.baseline!r}), "
        f"{len(sweep.scenarios)} scenario(s), {samples} -> {most}{seen.planned} "
        f"runs on executor {sweep.executor.kind!r}; records would go to {run_dir}/"
    )
    click.echo(f"identity: {_identity(sweep)}")
    checks = _checks(sweep)
    if checks is not None:
        click.echo(checks)


def _checks(sweep: ResolvedSweep) -> str | None:
    """``checks:`` how the questions are judged, when some carry their own ``expect``."""
    from counterfact.probes.comparators import check_spec

    own = [s.expect for s in sweep.scenarios if s.expect is not None]
    if not own:
        return None
    kinds = sorted({c.kind for c in own})
    distinct = len({id(c) for c in own})
    rest = len(sweep.scenarios) - len(own)
    return (
        f"checks: {len(own):,} question(s) with their own expect ({', '.join(kinds)}; "
        f"{distinct:,} distinct), {rest:,} by the sweep's comparator "
        f"({check_spec(sweep.comparator)})"
    )
