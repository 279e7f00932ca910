"""``counterfact plan RUN_DIR``: the samples a sweep needs, read from a pilot run directory.

The statistics (:mod:`counterfact.verdicts.planning.paired`, and with several questions
:mod:`counterfact.verdicts.planning.evalset` for the arm-level test) come from the pilot's verdict
rows and settings; the runs, spend and wall time from its run records, by the estimator
``validate --smoke`` uses (:mod:`counterfact.verdicts.planning.estimate`): the mean cost per
successful run for each cost key, the mean run time, and the runs in flight: the ``--concurrency``
given, else what the pilot achieved (its run time summed over its runs' wall time; the configured
``executor.concurrency`` is only a ceiling), bounded by ``executor.rate_limit.requests_per_minute``
when set; plus the pilot's start-up (its start to its first run: the executor's start, Ray's
when it uses Ray, is inside it), and its judging and report (from its last run to its summary's
``finished_at``) scaled by questions x arms; plus the command's own process start-up
(interpreter and imports, before the pilot's clock started), which the caller measures: the
``plan`` command passes its own (issue 43 item 8).
"""

from __future__ import annotations

import math
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Literal

from counterfact.exceptions import RunDirectoryError
from counterfact.orchestrator.storage.recordfiles import (
    require_records,
    runs_of,
    summary_of,
    verdicts_of,
)
from counterfact.records.plan import (
    ChallengerPlan,
    EvalSetPlan,
    EvalSetPoint,
    PilotEffectRecord,
    PlanRecord,
    WallTimeRecord,
)
from counterfact.records.summary import SweepSummary
from counterfact.records.verdicts import VerdictRecord
from counterfact.records.vocabulary import Alternative
from counterfact.verdicts.planning.design import Design, Planned
from counterfact.verdicts.planning.estimate import RunTotals, SweepEstimate, estimate_sweep
from counterfact.verdicts.planning.evalset import SEED, SWEEPS, EvalSetPlanned, eval_set_plans
from counterfact.verdicts.planning.paired import plan_challenger
from counterfact.verdicts.planning.pilot import (
    PilotEffect,
    Withheld,
    few_questions_note,
    pilot_effect,
    withheld,
)
from counterfact.verdicts.stats.settings import Waves


class _Pilot:
    """What the pilot's run records and summary say about time and spend."""

    def __init__(
        self, run_dir: Path, summary: SweepSummary, process_startup_s: float | None = None
    ) -> None:
        self.process_startup_s = process_startup_s
        totals, first, last = RunTotals(), math.inf, -math.inf
        for record in runs_of(run_dir):  # streamed: a pilot's runs are never all in memory
            totals.add(record)
            finished = datetime.fromisoformat(record.finished_at).timestamp()
            first, last = min(first, finished - record.duration_s), max(last, finished)
        self.unit = totals.per_run()
        self.count, durations = totals.count, totals.duration_s
        self.run_s = durations / self.count if self.count else None
        wall = last - first if self.count else 0.0
        self.concurrency = max(1.0, durations / wall) if wall > 0 else 1.0
        self.cost_per_run = self.unit.cost
        began = datetime.fromisoformat(summary.started_at).timestamp()
        done = datetime.fromisoformat(summary.finished_at).timestamp()
        self.startup_s = max(0.0, first - began) if self.count else None
        self.judging_s = max(0.0, done - last) if self.count else None
        executor = summary.config.get("executor")
        executor = executor if isinstance(executor, dict) else {}
        configured = executor.get("concurrency")
        self.configured = float(configured) if isinstance(configured, int) else None
        rate = executor.get("rate_limit")
        per_minute = rate.get("requests_per_minute") if isinstance(rate, dict) else None
        self.per_minute = float(per_minute) if isinstance(per_minute, int | float) else None

    def estimate(self, runs: int, conc: float, source: str, scale: float) -> SweepEstimate:
        """The spend and wall time of ``runs`` runs, judging scaled by ``scale`` (questions x
        arms over the pilot's).
        """
        judging = None if self.judging_s is None else self.judging_s * scale
        return estimate_sweep(
            runs,
            self.unit,
            conc,
            self.per_minute,
            source=source,
            startup_s=self.startup_s or 0.0,
            judging_s=judging,
            process_startup_s=self.process_startup_s or 0.0,
        )


def wall_record(e: SweepEstimate) -> WallTimeRecord:
    """The parts of an estimate's wall time, as recorded (read off the estimate's attributes)."""
    return WallTimeRecord.model_validate(e, from_attributes=True)


def _design(
    summary: SweepSummary,
    rows: list[VerdictRecord],
    effect: float | None,
    alternative: Alternative | None = None,
) -> Design:
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
        alternative or stats.alternative,
        family,
        len(challengers),
        stats.pairing,
        _waves(summary, rows),
        effect,
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
    conc: tuple[float, str],
    effect: float | None = None,
    eval_set: EvalSetPlan | None = None,
) -> ChallengerPlan:
    runs_needed = None if planned.samples is None else planned.samples * shape[0] * shape[1]
    found = None if runs_needed is None else pilot.estimate(runs_needed, *conc, 1.0)
    note = planned.note
    if planned.samples is None and planned.scenarios and effect is None:
        if planned.bound is not None:  # else the note says the pilot bounds no effect
            note = f"the power asked for is out of reach by {planned.searched_to:,} samples: {note}"
    elif planned.samples is None and planned.scenarios:
        note = (
            f"the power asked for is out of reach by {planned.searched_to:,} samples, even for "
            f"an effect of {effect:g}"
        ) + ("" if planned.note is None else f"; {planned.note}")
    return ChallengerPlan(
        arm=arm,
        samples=planned.samples,
        power=planned.power,
        power_method=planned.method,
        power_se=planned.se,
        runs=runs_needed,
        cost={} if found is None else found.spend,
        wall_s=None if found is None or pilot.run_s is None else found.wall_s,
        wall=None if found is None or pilot.run_s is None else wall_record(found),
        scenarios=planned.scenarios,
        note=note,
        eval_set=eval_set,
    )


def plan_sweep(
    run_dir: Path,
    *,
    power: float = 0.8,
    effect: float | None = None,
    concurrency: float | None = None,
    alternative: Alternative | None = None,
    process_startup_s: float | None = None,
) -> PlanRecord:
    """The plan for every challenger of the pilot sweep in ``run_dir`` (``alternative``: plan
    for that direction instead of the pilot's ``statistics.alternative``; ``process_startup_s``:
    a command's start-up, interpreter and imports, added to every wall time; None leaves it
    out).

    Raises:
        RunDirectoryError: no sweep records there (a bisection, or an interrupted sweep).
    """
    require_records(run_dir)
    summary = summary_of(run_dir)
    rows = verdicts_of(run_dir)
    if summary is None or not rows:
        msg = (
            f"{run_dir} holds no finished sweep to plan from (a bisection, or a sweep "
            "interrupted before its verdicts); run or resume the pilot with 'counterfact run'"
        )
        raise RunDirectoryError(msg, run_dir=run_dir)
    design = _design(summary, rows, effect, alternative)
    pilot = _Pilot(run_dir, summary, process_startup_s)
    arms = len({r.arm for r in rows})
    shape = (len(summary.scenarios), arms)
    conc, source = _concurrency(concurrency, pilot)
    pace = (conc, "given" if source == "given" else "the pilot achieved")
    by_arm: dict[str, list[VerdictRecord]] = defaultdict(list)
    for row in rows:
        if not row.is_baseline:
            by_arm[row.arm].append(row)
    plans = _plans(by_arm, design, power, pilot, shape, pace)
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
        concurrency_configured=pilot.configured,
        requests_per_minute=pilot.per_minute,
        startup_s=pilot.startup_s,
        process_startup_s=process_startup_s,
        judging_s=pilot.judging_s,
        challengers=plans,
        notes=_notes(design),
    )


def _plans(
    by_arm: dict[str, list[VerdictRecord]],
    design: Design,
    power: float,
    pilot: _Pilot,
    shape: tuple[int, int],
    pace: tuple[float, str],
) -> list[ChallengerPlan]:
    """Every challenger's plan; a placebo, or a pilot effect that may be noise or goes the
    other way, is withheld (:mod:`counterfact.verdicts.planning.pilot`).
    """
    seen = {a: pilot_effect(mine, design.alternative, design.alpha) for a, mine in by_arm.items()}
    held = {
        a: w
        for a, mine in by_arm.items()
        if (w := withheld(mine, seen[a], design.alternative, design.effect)) is not None
    }
    few = {a: n for a in by_arm if (n := few_questions_note(seen[a], design.effect)) is not None}
    sets = eval_set_plans(by_arm, design, power, skip=set(held) | set(few)) or {}
    out = []
    for arm, mine in by_arm.items():
        if arm in held:
            out.append(_withheld(arm, seen[arm], held[arm]))
            continue
        eval_set = None if arm not in sets else _eval_set(sets[arm], pilot, shape, pace)
        found = _challenger(
            arm, plan_challenger(mine, design, power), pilot, shape, pace, design.effect, eval_set
        )
        notes = [n for n in (few.get(arm), found.note) if n]
        update = {"pilot_effect": _effect_record(seen[arm]), "note": "; ".join(notes) or None}
        out.append(found.model_copy(update=update))
    return out


def _effect_record(e: PilotEffect | None) -> PilotEffectRecord | None:
    return (
        None if e is None else PilotEffectRecord(diff=e.diff, low=e.low, high=e.high, level=e.level)
    )


def _withheld(arm: str, e: PilotEffect | None, why: tuple[Withheld, str]) -> ChallengerPlan:
    """A challenger with no power target: a placebo, or a pilot effect not to plan for."""
    return ChallengerPlan(
        arm=arm,
        samples=None,
        power=None,
        power_method="none",
        power_se=None,
        runs=None,
        cost={},
        wall_s=None,
        scenarios=[],
        note=why[1],
        pilot_effect=_effect_record(e),
        withheld=why[0],
    )


def _concurrency(given: float | None, pilot: _Pilot) -> tuple[float, Literal["measured", "given"]]:
    """The runs in flight the wall time assumes, and where it came from: the configured
    ``executor.concurrency`` is a ceiling the pilot may not have reached (issue 26: 32
    configured, 11.7 achieved), so what the pilot achieved is used unless one is given.
    """
    if given is not None:
        return given, "given"
    return pilot.concurrency, "measured"


def _eval_set(
    planned: EvalSetPlanned, pilot: _Pilot, shape: tuple[int, int], pace: tuple[float, str]
) -> EvalSetPlan:
    """One challenger's eval-set plan as recorded, with its runs, spend and wall time."""
    est = None
    if planned.questions is not None and planned.seeds is not None:
        runs_needed = planned.questions * planned.seeds * shape[1]
        est = pilot.estimate(runs_needed, *pace, planned.questions / max(shape[0], 1))
    timed = est is not None and pilot.run_s is not None
    return EvalSetPlan(
        questions=planned.questions,
        seeds=planned.seeds,
        power=planned.power,
        power_se=planned.se,
        method=planned.method,
        sweeps=SWEEPS,
        rng_seed=SEED,
        pilot_questions=planned.pilot_questions,
        seeds_vary=planned.seeds_vary,
        seeds_add_nothing=planned.seeds_add_nothing,
        grid=[
            EvalSetPoint(seeds=g.seeds, questions=g.questions, power=g.power, power_se=g.se)
            for g in planned.grid
        ],
        runs=None if est is None else est.runs,
        cost={} if est is None else est.spend,
        wall_s=est.wall_s if est is not None and timed else None,
        wall=wall_record(est) if est is not None and timed else None,
        note=planned.note,
        effect=planned.effect,
    )
