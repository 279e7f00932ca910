"""What a sweep's declaration says beyond its fields: a plan too large to hold (refused), and
settings that do nothing as written (said as notes, not refused).
"""

from __future__ import annotations

import difflib

from counterfact.defaults import MAX_PLAN_RUNS
from counterfact.exceptions import ConfigError
from counterfact.orchestrator.config.checks import CheckBuilder
from counterfact.orchestrator.config.schema import SweepConfig
from counterfact.probes.arms import ArmSpec


def unused_settings(config: SweepConfig, checks: CheckBuilder) -> tuple[str, ...]:
    """Settings that do nothing as written (said as notes, not refused)."""
    notes: list[str] = []
    stats = config.statistics
    if stats.min_effect is not None and stats.decide == "tiers":
        notes.append("statistics.min_effect is used by 'decide: test' only; the tiers ignore it")
    notes += [f"checks.{name} is declared but no question asks for it" for name in checks.unused()]
    return tuple(notes)


def bound_plan(config: SweepConfig, arms: int, scenarios: int) -> None:
    """Refuse a plan larger than :data:`~counterfact.defaults.MAX_PLAN_RUNS` runs."""
    seq = config.sequential
    seeds = seq.max_samples if seq is not None else config.samples
    runs = seeds * arms * scenarios
    if runs > MAX_PLAN_RUNS:
        which = "sequential.max_samples" if seq is not None else "samples"
        msg = (
            f"the sweep plans {runs:,} runs ({which} {seeds:,} x {arms:,} arms x {scenarios:,} "
            f"scenarios), more than the {MAX_PLAN_RUNS:,} one sweep may hold; lower {which}, or "
            "split the arms or scenarios over several sweeps"
        )
        raise ConfigError(msg, field=which)


def unknown_facets(
    arms: tuple[ArmSpec, ...], baseline: str, origins: tuple[str, ...]
) -> tuple[str, ...]:
    """Facet paths a challenger declares that the baseline does not (a typo such as ``modle``
    makes an arm that changes nothing the runner reads), with the closest known path.
    """
    base = next((a for a in arms if a.id == baseline), None)
    if base is None or not base.facets:
        return ()
    everyone = {k for a in arms for k in a.facets}
    notes = []
    for arm, origin in zip(arms, origins, strict=True):
        for path in sorted(set(arm.facets) - set(base.facets)):
            others = sorted(everyone - {path})  # the baseline's keys and the other arms'
            close = difflib.get_close_matches(path, sorted(base.facets), n=1) or (
                difflib.get_close_matches(path, others, n=1)
            )
            hint = f"; did you mean {close[0]!r}?" if close else ""
            notes.append(
                f"{origin} (arm {arm.id!r}) sets facet {path!r}, which the baseline "
                f"{baseline!r} does not declare{hint}"
            )
    return tuple(notes)
