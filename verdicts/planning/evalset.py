"""How many questions, and how many seeds each, the arm-level test needs (``counterfact plan``
on a pilot with several questions).

The power of the engine's arm-level test is simulated
(:mod:`counterfact.verdicts.planning.power_evalset`,
:data:`SWEEPS` sweeps a grid point, from a fixed seed) on a grid of question counts
(:func:`question_grid`: 1-1.2-1.5-2-2.5-3-4-5-6-8 per decade, up to :data:`MAX_QUESTIONS`) and
seed counts (:data:`SEED_GRID`, up to :data:`MAX_SEEDS`). For each seed count the fewest
questions reaching the power asked for are found by a search on the question grid that starts at
the normal approximation's prediction (power grows with the questions), and the cheapest point in
runs (questions x seeds; fewer questions on a tie — questions are the dear part of an eval set)
is recommended.

Seed counts whose predicted runs are more than :data:`PRUNE` times the cheapest prediction are
not simulated. When the pilot's seeds never vary within a question, every seed repeats the first
and only the smallest seed count is simulated: more seeds add nothing, only more questions help.

**Which effect is planned for** (issue 43). With ``--effect D``, D, added per question
(:func:`counterfact.verdicts.planning.power_evalset.effect_pool`). Without it, not the pilot's own
estimate but the end of its arm-level interval nearer 0 (:func:`pilot_bound`: the sign-flip score
interval over questions at the level the verdicts print, 90% two-sided for alpha 0.05, so a 95%
one-sided bound), added the same way. A pilot's estimate from a few questions is noisy, and the
pilots that reach a plan at all are those whose interval left out 0 (the noise guard of
:mod:`counterfact.verdicts.planning.pilot`): their estimates lean high (a winner's curse). Planned
on the estimate, 20-question copies pilots with a true +0.2 printed 0.86 and realised 0.40 (the
estimate they planned on averaged +0.375). The power printed is then a promise for any effect at
least the bound, which holds for the true effect in about 95% of pilots (fewer among pilots the
guard let through; ``docs/statistics.md``, "The planner's promises"). When the bound needs more
than :data:`MAX_QUESTIONS` questions the plan says that no plan from this pilot keeps its promise,
instead of printing one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial

from counterfact.records.verdicts import VerdictRecord
from counterfact.verdicts.planning.design import Design, cells_of, excluded, question_of
from counterfact.verdicts.planning.pilot import pilot_effect
from counterfact.verdicts.planning.power import Cells
from counterfact.verdicts.planning.power_evalset import (
    EXACT_UP_TO,
    EvalDesign,
    Pool,
    effect_pool,
    pool_of,
    power_at,
    predicted_questions,
)
from counterfact.verdicts.planning.seedbound import PilotBound
from counterfact.verdicts.stats.clustered import floor_over
from counterfact.verdicts.stats.multiplicity import best_factor

SWEEPS = 300
"""Simulated sweeps per grid point (standard error at most 0.029, 0.023 at power 0.8)."""
SEED = 20_240_626
"""The simulation's fixed seed."""
CHECK_SWEEPS = 1_000
"""Fresh sweeps that re-estimate the power at the recommended point (standard error at most
0.016, 0.013 at power 0.8)."""
CHECK_SEED = SEED + 1
"""The re-estimate's seed: a stream independent of the search's, so the printed power carries
no winner's curse (the search keeps the first point whose noisy estimate clears the target)."""
MAX_QUESTIONS = 100_000
MAX_SEEDS = 50
MIN_SEEDS = 2
"""A sweep's fewest samples (rule 1: never a single-run verdict)."""
SEED_GRID = (2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50)
PRUNE = 1.5
"""Seed counts predicted to cost more than this many times the cheapest are not simulated."""
OUT_OF_SIGHT = 4
"""A seed count whose predicted questions exceed this many times :data:`MAX_QUESTIONS` is out of
reach without simulating it."""
_MANTISSAS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)


def question_grid(low: int = 2, high: int = MAX_QUESTIONS) -> list[int]:
    """Every whole count from ``low`` to 10, then 12, 15, 20, 25, 30, 40, ... up to ``high``."""
    out = set(range(max(low, 1), min(high, 10) + 1))
    decade = 10
    while decade <= high:
        out |= {round(m * decade) for m in _MANTISSAS if low <= m * decade <= high}
        decade *= 10
    return sorted(out)


@dataclass(frozen=True)
class GridPoint:
    """The fewest questions on the grid reaching the power at one seed count."""

    seeds: int
    questions: int | None
    """None: not by :data:`MAX_QUESTIONS`."""
    power: float | None
    se: float | None


@dataclass(frozen=True)
class EvalSetPlanned:
    """One challenger's eval-set plan, before runs, spend and wall time are added."""

    questions: int | None
    seeds: int | None
    power: float | None
    se: float | None
    grid: list[GridPoint]
    seeds_add_nothing: bool
    method: str
    seeds_vary: bool = True
    """Some pilot question's seeds varied (set by :func:`eval_set_plans`)."""
    pilot_questions: int = 0
    note: str | None = None
    effect: float | None = None
    """The effect the power is for (arm minus baseline flip rate, signed): ``--effect``, or the
    pilot's bound (:func:`pilot_bound`); None: the pilot's interval holds 0, nothing planned."""


def fewest_questions(
    power_of: Callable[[int], float], target: float, grid: Sequence[int], start: int
) -> int | None:
    """The first index of ``grid`` whose power reaches ``target`` (searched from ``start`` by
    doubling steps, then bisection); None when the last does not.
    """
    seen: dict[int, float] = {}

    def reaches(i: int) -> bool:
        if i not in seen:
            seen[i] = power_of(grid[i])
        return seen[i] >= target

    last = len(grid) - 1
    i = min(max(start, 0), last)
    step = 1
    if reaches(i):
        hi, lo = i, i - 1
        while lo >= 0 and reaches(lo):
            hi, step = lo, step * 2
            lo = hi - step
        lo = max(lo, -1)
    else:
        lo, hi = i, i + 1
        while hi <= last and not reaches(hi):
            lo, step = hi, step * 2
            hi = lo + step
        if hi > last:
            if reaches(last):
                hi = last
            else:
                return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if reaches(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _first(at: Callable[[int, int], tuple[float, float]], n: int, q: int) -> float:
    return at(q, n)[0]


def plan_eval_set(
    pools: Sequence[Pool],
    arm: int,
    design: EvalDesign,
    target: float,
    excluded: int = 0,
    sweeps: int = SWEEPS,
    seed: int = SEED,
    check: tuple[int, int] = (CHECK_SWEEPS, CHECK_SEED),
) -> EvalSetPlanned:
    """Questions and seeds per question for challenger ``pools[arm]`` to reach ``target``
    power under the arm-level test, the challengers' tests adjusted together.
    """
    pool = pools[arm]
    method = (
        f"arm-level sign-flip test over questions, simulated ({sweeps} sweeps a grid point, "
        f"exact up to {EXACT_UP_TO:,} questions, its normal tail beyond; two-level bootstrap "
        "of the pilot's questions and their seeds)"
    )
    least = max(MIN_SEEDS, excluded + 1)
    seeds_grid = sorted({least} | {n for n in SEED_GRID if least <= n <= MAX_SEEDS})
    flat = pool.degenerate
    if flat:
        seeds_grid = [least]
    factor = best_factor(design.adjust, len(pools))
    low = next(
        q for q in range(1, 64) if factor * floor_over(q, design.alternative) <= design.alpha
    )
    grid = question_grid(low)
    predicted = {
        n: predicted_questions(pool, n - excluded, design, target, len(pools)) for n in seeds_grid
    }
    costs = {n: q * n for n, q in predicted.items() if q is not None}
    if not costs:
        return EvalSetPlanned(None, None, None, None, [], flat, method)
    cheapest = min(costs.values())
    tried = [n for n in seeds_grid if n in costs and (costs[n] <= PRUNE * cheapest or n == least)]
    cache: dict[tuple[int, int], tuple[float, float]] = {}

    def at(q: int, n: int) -> tuple[float, float]:
        if (q, n) not in cache:
            cache[(q, n)] = power_at(pools, q, n - excluded, design, sweeps, seed)[arm]
        return cache[(q, n)]

    points = []
    for n in tried:
        guess = costs[n] / n
        if guess > OUT_OF_SIGHT * MAX_QUESTIONS:
            points.append(GridPoint(n, None, None, None))
            continue
        start = min(range(len(grid)), key=lambda i: abs(math.log(grid[i] / guess)))
        found = fewest_questions(partial(_first, at, n), target, grid, start)
        if found is None:
            points.append(GridPoint(n, None, None, None))
            continue
        power, se = at(grid[found], n)
        points.append(GridPoint(n, grid[found], power, se))
    reached = [p for p in points if p.questions is not None]
    if not reached:
        return EvalSetPlanned(None, None, None, None, points, flat, method)
    best = min(reached, key=lambda p: ((p.questions or 0) * p.seeds, p.questions))
    assert best.questions is not None
    power, se = power_at(pools, best.questions, best.seeds - excluded, design, *check)[arm]
    method += f"; its power re-estimated from {check[0]:,} fresh sweeps"
    return EvalSetPlanned(best.questions, best.seeds, power, se, points, flat, method)


def _varies(row: VerdictRecord) -> bool:
    """The row's seeds did not all give one outcome on each side."""
    t = row.test
    if t is None or t.pairs < 2:
        return False
    both = t.n11 or 0
    return t.n10 + both not in (0, t.pairs) or t.n01 + both not in (0, t.pairs)


def pilot_bound(rows: Sequence[VerdictRecord], design: Design) -> PilotBound | None:
    """The end of the pilot's arm-level interval nearer 0, when the interval leaves out 0 on a
    side the test looks at (None otherwise: no effect to plan for without ``--effect``).
    """
    seen = pilot_effect(rows, design.alternative, design.alpha)
    if seen is None:
        return None
    if seen.low > 0 and design.alternative != "less":
        return PilotBound(seen.low, "greater", seen.diff, seen.level)
    if seen.high < 0 and design.alternative != "greater":
        return PilotBound(-seen.high, "less", seen.diff, seen.level)
    return None


def _bound_note(planned: EvalSetPlanned, bound: PilotBound | None) -> str:
    """What the effect planned for is, when the pilot's bound sets it."""
    if bound is None:
        return (
            "the pilot's interval for its effect includes 0 (or lies against the test's "
            "direction): no eval-set plan from its own rates keeps a promise (pass --effect D "
            "to plan for the least effect worth finding)"
        )
    questions = planned.pilot_questions
    if planned.questions is None:
        return (
            f"no plan from this pilot keeps its promise: its {questions} questions bound the "
            f"arm's effect only at {bound.text()}, and an effect that small needs more than "
            f"{MAX_QUESTIONS:,} questions; pass --effect D to plan for the least effect worth "
            "finding, or run a larger pilot"
        )
    miss = (1 - bound.level) / 2
    return (
        f"planned for an effect of {bound.text()}, not for the estimate: an estimate from "
        f"{questions} questions is noisy and, once the noise guard let it through, leans high; "
        f"the power holds for any effect at least the bound (a one-sided {100 * (1 - miss):g}% "
        f"bound: the true effect is below it in about {100 * miss:g}% of pilots, more among "
        "those the guard let through)"
    )


def _note(planned: EvalSetPlanned, seeds_vary: bool, one_seed: bool, design: Design) -> str:
    if planned.questions is None and not planned.grid:
        return (
            "the pilot's questions show no effect the test's way: no number of them reaches "
            "the power (pass --effect D to plan for an effect of D)"
        )
    if one_seed:
        return (
            "the pilot has one scored seed pair per question, so it cannot show whether seeds "
            "vary: planned as if they repeat (more seeds add nothing; a pilot with 3 or more "
            "seeds a question can tell)"
        )
    if planned.seeds_add_nothing:
        return (
            "the pilot's seeds never varied within a question (each question's seeds are "
            "copies): more seeds add nothing, only more questions help"
        )
    if design.effect is not None:
        return (
            f"--effect {design.effect:g}: the pilot's own difference removed (each question's "
            "sides swapped at random), then a share of the arm's held seeds flip so the mean "
            "difference is the effect: whole questions where the pilot's seeds repeat, seed "
            "by seed where they varied"
        )
    return "" if seeds_vary else "no pilot question's seeds varied"


def pools_of(
    by_arm: Mapping[str, Sequence[VerdictRecord]], design: Design
) -> tuple[list[str], list[Pool], dict[str, list[VerdictRecord]], dict[str, PilotBound | None]]:
    """The challengers with two or more tested questions, their pools, their tested rows and
    (without ``--effect``) their pilot bounds; no challengers when none has two.

    A pool is the per-question effect model of
    :func:`counterfact.verdicts.planning.power_evalset.effect_pool` at ``--effect``, or without
    it at the pilot's bound (:func:`pilot_bound`); a challenger with no bound (its interval holds
    0: it is not planned, but counts in the adjustment) keeps its pilot's own pair-cell rates.
    """
    tested = {
        arm: [r for r in rows if r.test is not None and r.test.pairs > 0]
        for arm, rows in by_arm.items()
    }
    plain = replace(design, effect=None)
    cells = {
        arm: [c for r in rows if isinstance(c := cells_of(r, plain), Cells)]
        for arm, rows in tested.items()
    }
    arms = [a for a in by_arm if len(cells[a]) >= 2]
    declared = design.effect is not None
    bounds = {a: None if declared else pilot_bound(tested[a], design) for a in arms}
    pools = []
    for a in arms:
        bound = bounds[a]
        if design.effect is not None:
            size, direction = design.effect, design.alternative
        elif bound is not None:
            size, direction = bound.size, bound.direction
        else:
            pools.append(pool_of([(c.p10, c.p01) for c in cells[a]]))
            continue
        pools.append(effect_pool([q for r in tested[a] if (q := question_of(r))], size, direction))
    return arms, pools, tested, bounds


def eval_set_plans(
    by_arm: Mapping[str, Sequence[VerdictRecord]],
    design: Design,
    target: float,
    skip: Collection[str] = (),
) -> dict[str, EvalSetPlanned] | None:
    """Per challenger, its eval-set plan from its rows (one per question); None when the
    arm-level test is not the sign-flip test over questions (fewer than two tested questions)
    or the pilot's own test is not the paired fixed-sample one. Challengers in ``skip`` (no
    power target: placebos) count in the adjustment but are not planned.
    """
    if design.waves is not None or design.pairing != "seed":
        return None
    arms, pools, tested, bounds = pools_of(by_arm, design)
    if not arms:
        return None
    how = EvalDesign(design.alpha, design.adjust, design.alternative)
    out: dict[str, EvalSetPlanned] = {}
    for i, arm in enumerate(arms):
        if arm in skip:
            continue
        rows = tested[arm]
        left_out = max(excluded(r) for r in rows)
        varies = any(_varies(r) for r in rows)
        one_seed = all(r.test is not None and r.test.pairs < 2 for r in rows)
        bound = bounds[arm]
        if design.effect is None and bound is None:
            planned = EvalSetPlanned(None, None, None, None, [], pools[i].degenerate, "none")
            planned = replace(planned, pilot_questions=len(rows))
            out[arm] = replace(planned, seeds_vary=varies, note=_bound_note(planned, None))
            continue
        planned = plan_eval_set(pools, i, how, target, left_out)
        planned = replace(planned, pilot_questions=len(rows))
        notes = [_note(planned, varies, one_seed, design)]
        if design.effect is None:
            notes.insert(0, _bound_note(planned, bound))
        size, direction = (
            (design.effect, design.alternative) if bound is None else (bound.size, bound.direction)
        )
        out[arm] = replace(
            planned,
            seeds_vary=varies,
            note="; ".join(n for n in notes if n) or None,
            effect=None if size is None else (-size if direction == "less" else size),
        )
    return out
