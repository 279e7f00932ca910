"""``counterfact plan RUN_DIR``: the samples a sweep needs, read from a pilot run directory.

The statistics (:mod:`counterfact.verdicts.planning`) come from the pilot's verdict rows and
settings; the runs, spend and wall time from its run records: the mean cost per successful run
for each cost key, the mean run time, and the concurrency: the one given, else the sweep's
configured ``executor.concurrency``, else what the pilot achieved (its run time summed over its
wall time).
"""

from __future__ import annotations

import math
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Literal

from counterfact.exceptions import RunDirectoryError
from counterfact.orchestrator.storage.recordfiles import (
    read_summary,
    read_verdicts,
    require_records,
    runs,
)
from counterfact.records.plan import ChallengerPlan, PlanRecord, ScenarioPlan
from counterfact.records.verdicts import SweepSummary, VerdictRecord
from counterfact.verdicts.plan_design import Design, Planned
from counterfact.verdicts.planning import plan_challenger
from counterfact.verdicts.settings import Waves
from counterfact.verdicts.wording import duration


class _Pilot:
    """What the pilot's run records say about time and spend."""

    def __init__(self, run_dir: Path) -> None:
        totals: dict[str, float] = defaultdict(float)
        ok, durations, starts, ends = 0, 0.0, [], []
        for record in runs(run_dir):
            finished = datetime.fromisoformat(record.finished_at).timestamp()
            starts.append(finished - record.duration_s)
            ends.append(finished)
            durations += record.duration_s
            if record.ok:
                ok += 1
                for key, value in (record.cost or {}).items():
                    totals[key] += value
        self.count = len(ends)
        self.run_s = durations / self.count if self.count else None
        wall = max(ends) - min(starts) if ends else 0.0
        self.concurrency = max(1.0, durations / wall) if wall > 0 else 1.0
        self.cost_per_run = {k: v / ok for k, v in sorted(totals.items())} if ok else {}


def _design(summary: SweepSummary, rows: list[VerdictRecord]) -> Design:
    stats = summary.statistics
    if stats is None:
        msg = "summary.json has no statistics settings (a version-1 file); rerun the pilot"
        raise RunDirectoryError(msg)
    tested = [r for r in rows if r.test is not None]
    challengers = sorted({r.arm for r in tested})
    scenarios = sorted({r.scenario for r in tested})
    family = len(challengers) * (len(scenarios) if stats.family == "sweep" else 1)
    return Design(
        stats.alpha,
        stats.adjust,
        stats.alternative,
        family,
        len(challengers),
        stats.pairing,
        _waves(summary, rows),
    )


def _waves(summary: SweepSummary, rows: list[VerdictRecord]) -> Waves | None:
    """A sequential pilot's settings, as the engine resolved them (None: fixed-sample): the
    sequential section of the resolved config, the threshold from a row that was tested.
    """
    seq = summary.sequential
    stats = summary.statistics
    tested = [
        r.sequential
        for r in rows
        if r.sequential is not None and r.sequential.stopped_for != "untestable"
    ]
    if seq is None or stats is None or not tested:
        return None
    first = summary.config.get("samples")
    section = summary.config.get("sequential")
    min_effect = section.get("min_effect") if isinstance(section, dict) else None
    return Waves(
        samples=first if isinstance(first, int) else seq.wave,
        wave=seq.wave,
        max_samples=seq.max_samples,
        alpha=stats.alpha,
        threshold=tested[0].threshold,
        alternative=stats.alternative,
        min_effect=min_effect if isinstance(min_effect, float) else tested[0].min_effect,
    )


def _notes(design: Design) -> list[str]:
    """What the figures are when they are not samples per arm."""
    out = []
    if design.waves is not None:
        out.append(
            "the pilot is sequential: each figure is the sequential.max_samples at which its "
            "e-process stops as significant with the power asked for; arms stop earlier on "
            "average (expected seeds per scenario). A sequential pilot's rates lean to the "
            "extreme (arms stop on data that looks strong or weak): --effect at the least "
            "effect worth finding plans without that lean"
        )
    return out


def _challenger(
    arm: str,
    planned: Planned,
    pilot: _Pilot,
    shape: tuple[int, int],
    conc: float,
    effect: float | None = None,
) -> ChallengerPlan:
    runs_needed = None if planned.samples is None else planned.samples * shape[0] * shape[1]
    wall = None
    if runs_needed is not None and pilot.run_s is not None:
        wall = math.ceil(runs_needed / conc) * pilot.run_s  # waves of conc runs at once
    cost = (
        {} if runs_needed is None else {k: v * runs_needed for k, v in pilot.cost_per_run.items()}
    )
    note = planned.note
    if planned.samples is None and planned.scenarios and effect is None:
        note = (
            f"the power asked for is out of reach by {planned.searched_to:,} samples at the "
            "pilot's rates: it shows no effect the test's way, or one too small (pass "
            "--effect D to plan for an effect of D)"
        )
    elif planned.samples is None and planned.scenarios:
        note = (
            f"the power asked for is out of reach by {planned.searched_to:,} samples, even for "
            f"an effect of {effect:g}"
        )
    return ChallengerPlan(
        arm=arm,
        samples=planned.samples,
        power=planned.power,
        power_method=planned.method,
        power_se=planned.se,
        runs=runs_needed,
        cost=cost,
        wall_s=wall,
        scenarios=planned.scenarios,
        note=note,
    )


def plan_sweep(
    run_dir: Path,
    *,
    power: float = 0.8,
    effect: float | None = None,
    concurrency: float | None = None,
) -> PlanRecord:
    """The plan for every challenger of the pilot sweep in ``run_dir``.

    Raises:
        RunDirectoryError: no sweep records there (a bisection, or an interrupted sweep).
    """
    require_records(run_dir)
    summary = read_summary(run_dir)
    rows = read_verdicts(run_dir)
    if summary is None or not rows:
        msg = (
            f"{run_dir} holds no finished sweep to plan from (a bisection, or a sweep "
            "interrupted before its verdicts); run or resume the pilot with 'counterfact run'"
        )
        raise RunDirectoryError(msg, run_dir=run_dir)
    design = _design(summary, rows)
    pilot = _Pilot(run_dir)
    arms = len({r.arm for r in rows})
    shape = (len(summary.scenarios), arms)
    conc, source = _concurrency(concurrency, summary, pilot)
    by_arm: dict[str, list[VerdictRecord]] = defaultdict(list)
    for row in rows:
        if not row.is_baseline:
            by_arm[row.arm].append(row)
    plans = [
        _challenger(arm, plan_challenger(mine, design, power, effect), pilot, shape, conc, effect)
        for arm, mine in by_arm.items()
    ]
    return PlanRecord(
        run_dir=str(run_dir),
        name=summary.name,
        power_target=power,
        effect=effect,
        alpha=design.alpha,
        adjust=design.adjust,
        alternative=design.alternative,
        sequential=design.waves is not None,
        pairing=design.pairing,
        family_size=design.family_size,
        pilot_samples=max(r.samples_declared for r in rows),
        scenarios=shape[0],
        arms=arms,
        run_s_mean=pilot.run_s,
        concurrency=conc,
        concurrency_source=source,
        concurrency_measured=pilot.concurrency,
        challengers=plans,
        notes=_notes(design),
    )


def _concurrency(
    given: float | None, summary: SweepSummary, pilot: _Pilot
) -> tuple[float, Literal["measured", "given", "configured"]]:
    """The concurrency the wall time assumes, and where it came from."""
    if given is not None:
        return given, "given"
    executor = summary.config.get("executor")
    configured = executor.get("concurrency") if isinstance(executor, dict) else None
    if isinstance(configured, int) and configured >= 1:
        return float(configured), "configured"
    return pilot.concurrency, "measured"


def _scenario_line(s: ScenarioPlan) -> str:
    own = "out of reach" if s.samples is None else f"{s.samples} (power {s.power:.2f})"
    rates = f"p10 {s.p10:.2f}, p01 {s.p01:.2f}"
    if s.p_arm is not None and s.p_base is not None:
        rates = f"arm {s.p_arm:.2f}, baseline {s.p_base:.2f}"
    spent = ""
    if s.expected_samples is not None:
        spent = f"; stops after {s.expected_samples:.0f} seeds on average"
    return f"{s.scenario}: its own test needs {own}; {rates}{spent}"


def _source(plan: PlanRecord) -> str:
    measured = plan.concurrency_measured
    if plan.concurrency_source == "measured" or measured is None:
        return plan.concurrency_source
    return f"{plan.concurrency_source}; the pilot achieved {measured:.1f}"


def render_plan(plan: PlanRecord) -> str:
    """The plan as text: one block per challenger."""
    what = f"an effect of {plan.effect:g}" if plan.effect is not None else "the pilot's rates"
    test = "exact McNemar" if plan.pairing == "seed" else "Fisher exact (unpaired)"
    if plan.sequential:
        test = "the sequential e-process"
    lines = [
        f"plan for {plan.name} (pilot: {plan.pilot_samples} samples, {plan.scenarios} "
        f"scenario(s), {plan.arms} arms): power {plan.power_target:g} for {what}; {test} "
        f"({plan.alternative}), {plan.adjust} over {plan.family_size} tests, alpha {plan.alpha:g}"
    ]
    lines += [f"  note: {n}" for n in plan.notes]
    for c in plan.challengers:
        if c.samples is None:
            lines.append(f"  {c.arm}: {c.note or 'no test to plan from'}")
            continue
        se = f" ± {c.power_se:.3f}" if c.power_se is not None else ""
        what = "max_samples" if plan.sequential else "samples per arm"
        lines.append(f"  {c.arm}: {c.samples} {what} (power {c.power:.2f}{se}, {c.power_method})")
        lines += [f"    {_scenario_line(s)}" for s in c.scenarios]
        spend = ", ".join(f"{k} ~{v:,.0f}" for k, v in c.cost.items())
        wall = "" if c.wall_s is None else f", wall ~{duration(c.wall_s)}"
        runs = f"at most {c.runs:,} runs" if plan.sequential else f"{c.runs:,} runs"
        lines.append(
            f"    the sweep at {c.samples} samples: {runs}{', ' + spend if spend else ''}"
            f"{wall} at concurrency {plan.concurrency:.1f} ({_source(plan)})"
        )
        if c.note:
            lines.append(f"    note: {c.note}")
    return "\n".join(lines)
