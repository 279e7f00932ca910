"""The ``counterfact`` command: a thin layer over the Python API.

User errors print one line (``error: ...``) without a traceback and exit with code 2.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click

from counterfact.exceptions import (
    ConfigError,
    CounterfactError,
    RunDirectoryError,
    SweepInterrupted,
)
from counterfact.orchestrator.bisect import run_bisect
from counterfact.orchestrator.identity import fingerprint
from counterfact.orchestrator.loading import load_sweep
from counterfact.orchestrator.logs import configure_logging
from counterfact.orchestrator.plan import build_plan
from counterfact.orchestrator.progress import LogProgress, Progress, TerminalProgress
from counterfact.orchestrator.resolve import ResolvedSweep
from counterfact.orchestrator.store import check_run_dir
from counterfact.orchestrator.sweep import run_sweep
from counterfact.orchestrator.version import package_version


def _fail(exc: CounterfactError) -> None:
    click.echo(f"error: {exc}", err=True)
    code = 2 if isinstance(exc, ConfigError | RunDirectoryError) else 1
    sys.exit(code)


def _run_dir(sweep: ResolvedSweep, out: str | None, suffix: str = "") -> Path:
    return Path(out) if out else Path(sweep.config.output_dir) / (sweep.config.name + suffix)


def _load(
    config: str,
    overrides: Sequence[str],
    executor: str | None,
    address: str | None,
    out: str | None,
    *,
    for_bisect: bool = False,
    fresh: bool = False,
) -> tuple[ResolvedSweep, Path]:
    sweep = load_sweep(
        config, overrides=overrides, executor=executor, address=address, for_bisect=for_bisect
    )
    run_dir = _run_dir(sweep, out, "-bisect" if for_bisect else "")
    arms = [sweep.baseline_arm()] if for_bisect else None
    check_run_dir(run_dir, fingerprint(sweep, arms), fresh=fresh)
    return sweep, run_dir


_config_arg = click.argument("config", type=click.Path(dir_okay=False, path_type=str))
_executor_opt = click.option(
    "--executor", type=click.Choice(["ray", "local"]), help="Override executor.kind."
)
_address_opt = click.option("--address", help="Ray address to join ('auto' or host:port).")
_out_opt = click.option(
    "--out", type=click.Path(file_okay=False), help="Run directory (default <output_dir>/<name>)."
)
_fresh_opt = click.option(
    "--fresh",
    is_flag=True,
    help="Move an existing run directory aside (never deleted) and start anew.",
)
_cache_opt = click.option(
    "--cache",
    "cache_dir",
    type=click.Path(file_okay=False),
    help="Run cache directory shared across sweeps (overrides cache_dir).",
)
_set_opt = click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a config key by dotted path (repeatable), e.g. --set samples=5.",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_version(), prog_name="counterfact")
@click.option("-v", "--verbose", is_flag=True, help="Log debug events.")
def main(verbose: bool) -> None:
    """Seeded counterfactual reruns: which change made the answer different?"""
    configure_logging(verbose=verbose)


@main.command()
@_config_arg
@_executor_opt
@_address_opt
@_out_opt
@_set_opt
@_fresh_opt
@_cache_opt
def run(
    config: str,
    executor: str | None,
    address: str | None,
    out: str | None,
    overrides: tuple[str, ...],
    fresh: bool,
    cache_dir: str | None,
) -> None:
    """Run the sweep in CONFIG (resuming its run directory) and print its verdict table."""
    try:
        sweep, run_dir = _load(config, overrides, executor, address, out, fresh=fresh)
        progress: Progress = TerminalProgress() if sys.stderr.isatty() else LogProgress()
        result = run_sweep(
            sweep,
            run_dir=run_dir,
            progress=progress,
            fresh=fresh,
            cache_dir=Path(cache_dir) if cache_dir else None,
        )
    except SweepInterrupted as exc:
        click.echo(f"{exc}: counterfact run {config} --out {run_dir}", err=True)
        sys.exit(130)
    except CounterfactError as exc:
        _fail(exc)
        return
    summary = result.summary
    if summary.runs_reused or summary.runs_from_cache:
        click.echo(
            f"resumed: {summary.runs_reused} runs read back, {summary.runs_from_cache} from the "
            f"cache, {summary.runs_used} run now"
            + (" (a torn last line was dropped)" if summary.torn_line_dropped else ""),
            err=True,
        )
    click.echo(result.table())
    click.echo("")
    quiet = 0
    for row in result.rows:
        if row.is_baseline:
            continue
        if row.verdict == "not-confirmed":
            quiet += 1
            continue
        click.echo(f"- {row.scenario}/{row.arm}: {row.claim}")
    if quiet:
        click.echo(f"- {quiet} arm(s) not confirmed (no flip); every claim is in verdicts.jsonl")
    click.echo(f"\nrecords: {run_dir}/ (runs.jsonl, verdicts.jsonl, summary.json)")


@main.command()
@_config_arg
@_executor_opt
@_address_opt
@_out_opt
@_set_opt
@click.option("--bisect", "for_bisect", is_flag=True, help="Validate for 'counterfact bisect'.")
def validate(
    config: str,
    executor: str | None,
    address: str | None,
    out: str | None,
    overrides: tuple[str, ...],
    for_bisect: bool,
) -> None:
    """Check CONFIG (schema, refusals, runner import, run directory) without running anything."""
    try:
        sweep, run_dir = _load(config, overrides, executor, address, out, for_bisect=for_bisect)
    except CounterfactError as exc:
        _fail(exc)
        return
    if for_bisect:
        cfg = sweep.config.bisect
        assert cfg is not None
        click.echo(
            f"ok: bisect {sweep.config.name!r}: {len(cfg.suspects)} suspects, at most "
            f"{cfg.max_probes} probes x {sweep.config.samples} samples = "
            f"{cfg.max_probes * sweep.config.samples} runs on executor "
            f"{sweep.config.executor.kind!r}; records would go to {run_dir}/"
        )
        return
    for skipped in sweep.skipped:
        click.echo(f"note: grid combination {skipped!r} equals a declared arm; skipped")
    runs = len(build_plan(sweep.scenarios, sweep.arms, sweep.config.samples))
    click.echo(
        f"ok: sweep {sweep.config.name!r}: {len(sweep.arms)} arms (baseline {sweep.baseline!r}), "
        f"{len(sweep.scenarios)} scenario(s), {sweep.config.samples} samples -> {runs} runs on "
        f"executor {sweep.config.executor.kind!r}; records would go to {run_dir}/"
    )


@main.command(name="bisect")
@_config_arg
@_executor_opt
@_address_opt
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    help="Run directory (default <output_dir>/<name>-bisect).",
)
@_set_opt
@_fresh_opt
@_cache_opt
def bisect_command(
    config: str,
    executor: str | None,
    address: str | None,
    out: str | None,
    overrides: tuple[str, ...],
    fresh: bool,
    cache_dir: str | None,
) -> None:
    """Find minimal culprit sets among the bisect.suspects of CONFIG (resuming its directory)."""
    try:
        sweep, run_dir = _load(
            config, overrides, executor, address, out, for_bisect=True, fresh=fresh
        )
        result = run_bisect(
            sweep,
            run_dir=run_dir,
            fresh=fresh,
            cache_dir=Path(cache_dir) if cache_dir else None,
        )
    except SweepInterrupted as exc:
        click.echo(f"{exc}: counterfact bisect {config} --out {run_dir}", err=True)
        sys.exit(130)
    except CounterfactError as exc:
        _fail(exc)
        return
    click.echo(result.report())
    click.echo(f"\nrecords: {run_dir}/ (runs.jsonl, bisect.json)")


if __name__ == "__main__":
    main()
