"""``counterfact plan`` as text: the eval-set plan first when the pilot has several questions
(the arm-level verdict is the headline), then each question's own test; spend and wall time in
the words ``validate --smoke`` uses (:func:`counterfact.verdicts.planning.estimate.estimate_text`).
"""

from __future__ import annotations

from counterfact.records.plan import (
    ChallengerPlan,
    EvalSetPlan,
    PlanRecord,
    ScenarioPlan,
    WallTimeRecord,
)
from counterfact.verdicts.planning.estimate import SweepEstimate, estimate_text
from counterfact.verdicts.wording.shared import duration

SHOWN = 10
"""Questions listed per challenger under an eval-set plan (``--json`` has them all)."""


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
    if plan.concurrency_source == "given":
        return "given"
    if plan.concurrency_source == "configured":
        return "configured"
    return "the pilot achieved"


def _estimate(
    plan: PlanRecord, runs: int, spend: dict[str, float], wall: WallTimeRecord | None
) -> str:
    """The shared estimate line, rebuilt from the record's figures."""
    return estimate_text(
        SweepEstimate(
            runs=runs,
            spend=spend,
            run_s=plan.run_s_mean or 0.0,
            in_flight=plan.concurrency,
            in_flight_source=_source(plan),
            per_minute=plan.requests_per_minute,
            runs_s=wall.runs_s if wall else 0.0,
            startup_s=wall.startup_s if wall else 0.0,
            process_startup_s=wall.process_startup_s if wall else 0.0,
            judging_s=wall.judging_s if wall else None,
        ),
        at_most=plan.sequential,
    )


def _header(plan: PlanRecord) -> list[str]:
    what = (
        f"an effect of {plan.effect:g}"
        if plan.effect is not None
        else "the pilot's effect, bounded"
    )
    test = "exact McNemar" if plan.pairing == "seed" else "Fisher exact (unpaired)"
    if plan.sequential:
        test = "the sequential e-process"
    lines = [
        f"plan for {plan.name} (pilot: {plan.pilot_samples} samples, {plan.scenarios} "
        f"scenario(s), {plan.arms} arms): power {plan.power_target:g} for {what}; {test} "
        f"({plan.alternative}), {plan.adjust} over {plan.family_size} tests, alpha {plan.alpha:g}"
    ]
    pace = [f"{plan.concurrency:.1f} run(s) in flight ({_source(plan)})"]
    if plan.concurrency_configured is not None:
        pace.append(f"executor.concurrency {plan.concurrency_configured:g} is only a ceiling")
    if plan.requests_per_minute is not None:
        pace.append(f"rate limit {plan.requests_per_minute:g}/min caps the pace")
    if plan.judging_s is not None:
        pace.append(
            f"judging and report took the pilot {duration(plan.judging_s)} (scaled by "
            "questions x arms)"
        )
    if plan.process_startup_s is not None:
        pace.append(
            f"process start-up ~{duration(plan.process_startup_s)} (this command's own: "
            "interpreter and imports; the sweep's command pays it too)"
        )
    lines.append("  wall time: " + "; ".join(pace))
    return lines


def _eval_set_lines(plan: PlanRecord, e: EvalSetPlan) -> list[str]:
    head = "    eval set (the arm-level test over questions, the headline verdict): "
    if e.questions is None or e.seeds is None:
        out = [head + "out of reach by 100,000 questions at up to 50 seeds each"]
    else:
        se = f" ± {e.power_se:.3f}" if e.power_se is not None else ""
        power = f"{e.power:.2f}" if e.power is not None else "?"
        aim = "" if e.effect is None else f" for an effect of {e.effect:+.3f}"
        out = [
            head + f"{e.questions:,} questions x {e.seeds} seeds each (power {power}{se}{aim}, "
            f"simulated from the pilot's {e.pilot_questions} questions)"
        ]
    if e.grid:
        cells = ", ".join(
            f"{g.seeds} -> {'out of reach' if g.questions is None else f'{g.questions:,}'}"
            for g in e.grid
        )
        out.append(f"      seeds each -> fewest questions: {cells}")
    if e.runs is not None and e.questions is not None:
        line = _estimate(plan, e.runs, e.cost, e.wall)
        out.append(f"      the sweep at {e.questions:,} questions x {e.seeds} seeds: {line}")
    if e.note:
        out.append(f"      note: {e.note}")
    out.append(f"      method: {e.method}")
    return out


def _per_question(plan: PlanRecord, c: ChallengerPlan) -> list[str]:
    se = f" ± {c.power_se:.3f}" if c.power_se is not None else ""
    what = "max_samples" if plan.sequential else "samples per arm"
    lead = "per question (the seed-level stratified test, secondary): " if c.eval_set else ""
    lines = [f"    {lead}{c.samples} {what} (power {c.power:.2f}{se}, {c.power_method})"]
    shown = c.scenarios if c.eval_set is None else c.scenarios[:SHOWN]
    lines += [f"    {_scenario_line(s)}" for s in shown]
    if len(shown) < len(c.scenarios):
        lines.append(f"    ... and {len(c.scenarios) - len(shown)} more questions (--json)")
    if c.runs is not None:
        lines.append(
            f"    the sweep at {c.samples} samples: {_estimate(plan, c.runs, c.cost, c.wall)}"
        )
    return lines


def render_plan(plan: PlanRecord) -> str:
    """The plan as text: one block per challenger."""
    lines = _header(plan)
    lines += [f"  note: {n}" for n in plan.notes]
    for c in plan.challengers:
        lines.append(f"  {c.arm}:")
        if c.eval_set is not None:
            lines += _eval_set_lines(plan, c.eval_set)
        if c.samples is None:
            lines.append(f"    {c.note or 'no test to plan from'}")
            continue
        lines += _per_question(plan, c)
        if c.note:
            lines.append(f"    note: {c.note}")
    return "\n".join(lines)
