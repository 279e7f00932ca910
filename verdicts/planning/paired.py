"""Samples per arm for a power asked for, from a pilot's verdict rows (``counterfact plan``).

The paired planner is here; the design it shares and the rates a row implies are in
:mod:`counterfact.verdicts.planning.design`, the ``pairing: none`` planner in
:mod:`counterfact.verdicts.planning.unpaired` and the sequential one in
:mod:`counterfact.verdicts.planning.sequential`; :func:`plan_challenger` picks the one that is the
sweep's own test.

Paired: each scenario's own test (the exact McNemar test) is planned exactly at its family's
per-test level; with several scenarios the pooled (stratified) test is simulated at the level over
the challengers, and it is the figure recommended — the one result that survives when many
per-scenario tests are adjusted. Rates that show no effect the test's way are out of reach at
once (no sample size gives them more power than the level). With ``--effect`` each scenario is
a mixture of states (:func:`counterfact.verdicts.planning.design.cells_of`: the effect added per
question, a copies question moving whole), its exact power the weighted sum of the states' and
the pooled simulation drawing each scenario's state once a sweep. Without ``--effect`` the plan is
the ``--effect`` plan at the pilot's bound (:mod:`counterfact.verdicts.planning.seedbound`), not
at its own rates, and a pilot whose interval holds 0 gets no plan.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from counterfact.records.plan import ScenarioPlan
from counterfact.records.verdicts import VerdictRecord
from counterfact.records.vocabulary import Alternative
from counterfact.verdicts.planning.design import (
    Design,
    Planned,
    cells_of,
    copies_note,
    excluded,
    nothing_to_plan,
    question_of,
    towards,
)
from counterfact.verdicts.planning.power import (
    CAP,
    FRESH,
    Cells,
    Mixed,
    mean_of,
    mixed_power,
    per_test_level,
    pooled_power,
    samples_for,
    states_of,
)
from counterfact.verdicts.planning.seedbound import bound_note, seeds_bound
from counterfact.verdicts.planning.sequential import plan_sequential
from counterfact.verdicts.planning.unpaired import plan_unpaired

DRAWS = 10_000
"""Simulated sweeps per pooled power figure (standard error at most 0.005)."""


def _settled(cells: Cells | Mixed, level: float, alternative: Alternative) -> int:
    """The sample count past which more seeds cannot change the power: :data:`CAP`, or for a
    copies question (every state one outcome a side: ``n`` pairs all alike) the fewest pairs
    whose one-sided p, ``0.5^n``, reaches the level.
    """
    if not all(c.p10 in (0.0, 1.0) and c.p01 in (0.0, 1.0) for c, _ in states_of(cells)):
        return CAP
    one_sided = level / 2 if alternative == "two-sided" else level
    return max(2, math.ceil(math.log2(1 / one_sided) - 1e-9))


def _scenario(
    row: VerdictRecord, cells: Cells | Mixed, design: Design, target: float
) -> ScenarioPlan:
    level = per_test_level(design.alpha, design.adjust, design.family_size)
    found = None
    mean = mean_of(cells)
    if towards(mean.p10, mean.p01, design.alternative) or target <= level:
        found = samples_for(
            target,
            lambda n: mixed_power(n, cells, level, design.alternative),
            cap=_settled(cells, level, design.alternative),
        )
    return ScenarioPlan(
        scenario=row.scenario,
        p10=mean.p10,
        p01=mean.p01,
        samples=None if found is None else found[0] + excluded(row),
        power=None if found is None else found[1],
    )


def _pooled(
    tested: Sequence[tuple[VerdictRecord, Cells | Mixed]],
    scenarios: list[ScenarioPlan],
    design: Design,
    target: float,
    seed: int,
    note: str | None,
) -> Planned:
    """The stratified test over the scenarios, simulated (common random numbers: the same
    draws at every sample count).
    """
    level = per_test_level(design.alpha, design.adjust, design.challengers)
    cells = [c for _, c in tested]
    method = (
        f"pooled test over {len(tested)} scenarios, simulated ({DRAWS:,} draws; the power "
        "re-estimated from fresh draws)"
    )
    toward = sum(mean_of(c).p10 for c in cells), sum(mean_of(c).p01 for c in cells)
    if not towards(*toward, design.alternative) and target > level:
        return Planned(None, None, method, None, scenarios, note)

    def pooled(n: int) -> float:
        rng = np.random.default_rng(seed)
        return pooled_power(n, cells, level, design.alternative, rng, DRAWS)[0]

    found = samples_for(target, pooled)
    if found is None:
        return Planned(None, None, method, None, scenarios, note)
    n, _ = found
    fresh = np.random.default_rng(seed + FRESH)  # not the search's draws: no winner's curse
    power, se = pooled_power(n, cells, level, design.alternative, fresh, DRAWS)
    # samples, not pairs: seed 0 is no pair when it is the reference (rule 13)
    return Planned(n + max(excluded(r) for r, _ in tested), power, method, se, scenarios, note)


def plan_challenger(
    rows: Sequence[VerdictRecord],
    design: Design,
    target: float,
    seed: int = 0,
) -> Planned:
    """The samples one challenger's rows (one per scenario) need for ``target`` power, under the
    sweep's own test (with ``--effect`` on a copies pilot, saying what seeds cannot add).
    """
    if design.effect is not None:
        planned = _planned(rows, design, target, seed)
        notes = [planned.note, copies_note(rows, design)]
    elif not any(question_of(r) is not None for r in rows):
        return nothing_to_plan()
    elif _all_repeat(rows, design.alpha):
        planned = _planned(rows, design, target, seed)
        notes = [planned.note, REPEATS]
    else:
        bound = seeds_bound(rows, design.alternative, design.alpha)
        if bound is None:
            planned = replace(nothing_to_plan(), scenarios=_scenarios_of(rows, design), note=None)
        else:
            at = replace(design, effect=bound.size, toward=bound.direction)
            planned = _planned(rows, at, target, seed)
        notes = [bound_note(bound, planned.samples is not None), planned.note]
        planned = replace(planned, bound=bound)
    return replace(planned, note="; ".join(n for n in notes if n) or None)


REPEATS = (
    "every pilot question's seeds repeat: the pilot saw its questions as they are (no seed "
    "noise to lean high), so more seeds are planned at its own rates"
)


def _all_repeat(rows: Sequence[VerdictRecord], alpha: float) -> bool:
    """Whether every pilot question's seeds repeat (copies) on enough pairs to show it: its
    rates are then no noisy estimate. A question with a few pairs repeats by chance (3 of 3 at
    a per-seed rate of 0.6 in 22% of pilots), so each needs the pairs a copies question's exact
    test needs to reach ``alpha`` (0.5^n <= alpha), and one more.
    """
    least = math.ceil(math.log2(1 / alpha)) + 1
    tested = [r.test for r in rows if r.test is not None and r.test.pairs > 0]
    questions = [q for r in rows if (q := question_of(r)) is not None]
    return (
        bool(questions)
        and all(q.repeats for q in questions)
        and all(t.pairs >= least for t in tested)
    )


def _scenarios_of(rows: Sequence[VerdictRecord], design: Design) -> list[ScenarioPlan]:
    """The scenarios' pilot rates, with no plan (the pilot bounds no effect)."""
    plain = [(r, c) for r in rows if (c := cells_of(r, design)) is not None]
    return [
        ScenarioPlan(
            scenario=r.scenario, p10=mean_of(c).p10, p01=mean_of(c).p01, samples=None, power=None
        )
        for r, c in plain
    ]


def _planned(rows: Sequence[VerdictRecord], design: Design, target: float, seed: int) -> Planned:
    if design.waves is not None:
        return plan_sequential(rows, design, target, seed)
    if design.pairing == "none":
        return plan_unpaired(rows, design, target)
    tested = [(r, c) for r in rows if (c := cells_of(r, design)) is not None]
    if not tested:
        return nothing_to_plan()
    scenarios = [_scenario(r, c, design, target) for r, c in tested]
    skipped = len(rows) - len(tested)
    note = f"{skipped} scenario(s) without a test were left out" if skipped else None
    if len(tested) == 1:
        only = scenarios[0]
        return Planned(only.samples, only.power, "exact enumeration", None, scenarios, note)
    return _pooled(tested, scenarios, design, target, seed, note)
