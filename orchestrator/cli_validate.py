"""``counterfact validate``: check a sweep file without running anything."""

from __future__ import annotations

import click

from counterfact.exceptions import CounterfactError
from counterfact.orchestrator.cli_common import (
    address_opt,
    config_arg,
    executor_opt,
    fail,
    load,
    out_opt,
    set_opt,
)
from counterfact.orchestrator.plan import build_plan
from counterfact.orchestrator.store import RUNS_FILE, read_runs


@click.command()
@config_arg
@executor_opt
@address_opt
@out_opt
@set_opt
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
        sweep, run_dir = load(config, overrides, executor, address, out, for_bisect=for_bisect)
    except CounterfactError as exc:
        fail(exc)
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
    plan = build_plan(sweep.scenarios, sweep.arms, sweep.config.samples)
    runs = len(plan)
    existing = read_runs(run_dir / RUNS_FILE)
    if existing.records:
        done = {(r.scenario, r.arm, r.seed) for r in existing.records}
        left = sum((c.scenario.id, c.arm.id, c.seed) not in done for c in plan)
        click.echo(
            f"note: {run_dir}/ holds {len(done)} recorded runs; run would resume them and "
            f"execute {left} more"
            + (" (a torn last line would be dropped)" if existing.torn else "")
        )
    click.echo(
        f"ok: sweep {sweep.config.name!r}: {len(sweep.arms)} arms (baseline {sweep.baseline!r}), "
        f"{len(sweep.scenarios)} scenario(s), {sweep.config.samples} samples -> {runs} runs on "
        f"executor {sweep.config.executor.kind!r}; records would go to {run_dir}/"
    )
