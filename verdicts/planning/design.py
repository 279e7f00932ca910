"""What ``counterfact plan`` plans for, shared by its three planners (paired, unpaired,
sequential): the sweep's design, one challenger's plan, and the rates a pilot row implies.

Per scenario, the pair-cell rates come from its test record (``n10 / pairs``, ``n01 / pairs``).
With a declared effect ``d`` (issue 43) the effect is added per question, the way the data's
structure adds it (:func:`counterfact.verdicts.planning.power_evalset.question_states`): the
pilot's own difference removed, then a question whose seeds repeat (copies) moves whole, with
probability ``d`` over the room its arm has to move, and one whose seeds varied moves seed by
seed; the scenario is then a mixture of states
(:class:`~counterfact.verdicts.planning.power.Mixed`), its power the weighted sum. The old
model raised the arm's side seed by seed on every question (``p10 = p01 + d``): on a copies
question it planned seeds as if independent (a power that grows with the seeds, where more
seeds add nothing), and where the baseline alone flipped it kept a difference of ``-1``.

The unpaired planner reads the same states as the arm's and the baseline's flip rates
(``p10 + p11``, ``p01 + p11``): its test ignores the pairing, but a copies question's runs
still repeat on each side, so it has the same structure. No planner is left on the old model:
each of the three plans per question, and each question's seeds repeat or vary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from counterfact.records.plan import ScenarioPlan
from counterfact.records.verdicts import VerdictRecord
from counterfact.records.vocabulary import Adjustment, Alternative, Pairing
from counterfact.verdicts.planning.power import CAP, Cells, Mixed
from counterfact.verdicts.planning.power_evalset import Question, question_states
from counterfact.verdicts.planning.seedbound import SeedsBound
from counterfact.verdicts.stats.settings import Waves


@dataclass(frozen=True)
class Design:
    """What the sweep's tests are: level, adjustment, direction, the families' sizes."""

    alpha: float
    adjust: Adjustment
    alternative: Alternative
    family_size: int
    """Tests in one per-scenario family."""
    challengers: int
    """Tests in the pooled family (one per challenger)."""
    pairing: Pairing = "seed"
    """``none``: the sweep's test is Fisher's unpaired test, planned per scenario."""
    waves: Waves | None = None
    """A sequential pilot's settings: its e-process is planned instead (per scenario, whatever
    the pairing)."""
    effect: float | None = None
    """The effect to plan for (``--effect``, or without it the pilot's bound): the arm's side
    raised by it; None plans for the pilot's own rates."""
    toward: Alternative | None = None
    """The side the effect moves the arm (``less``: fewer flips); None: the test's direction.
    Set for a two-sided test planned at a pilot bound below 0."""


@dataclass(frozen=True)
class Planned:
    """One challenger's plan, before runs, spend and wall time are added."""

    samples: int | None
    power: float | None
    method: str
    se: float | None
    scenarios: list[ScenarioPlan]
    note: str | None
    searched_to: int = CAP
    """The largest sample count the search tried (what "out of reach" means)."""
    bound: SeedsBound | None = None
    """Without ``--effect``: the pilot's bound the plan is for (None: it bounds no effect, or
    ``--effect`` was given)."""


def nothing_to_plan() -> Planned:
    """The plan of a challenger none of whose scenarios has a test."""
    return Planned(None, None, "none", None, [], "no scenario has a test to plan from")


def excluded(row: VerdictRecord) -> int:
    """Seeds of the row that are no pair (seed 0 when it is the reference)."""
    return row.test.pairs_excluded if row.test is not None else 0


def question_of(row: VerdictRecord) -> Question | None:
    """A tested row's pair-cell rates (``n11`` taken as 0 on records too old to hold it); None
    without a test.
    """
    t = row.test
    if t is None or t.pairs == 0:
        return None
    return Question(t.n10 / t.pairs, t.n01 / t.pairs, (t.n11 or 0) / t.pairs)


def cells_of(row: VerdictRecord, design: Design) -> Cells | Mixed | None:
    """The pair-cell rates a scenario's row implies under the design's effect: the pilot's
    own, or with ``--effect`` its per-question states (module docstring); None: it has no test
    to plan.
    """
    q = question_of(row)
    if q is None:
        return None
    if design.effect is None:
        return Cells(q.p10, q.p01)
    states, _ = question_states(q, design.effect, design.toward or design.alternative)
    return Mixed(tuple(Cells(a, b) for a, b, _, _ in states), tuple(w for *_, w in states))


def rates_of(row: VerdictRecord, design: Design) -> list[tuple[float, float, float]] | None:
    """The arm's and the baseline's flip rates a scenario's row implies under the design's
    effect (unpaired plans), per state with its weight (one state without ``--effect``); None
    without a test, or on a record too old to hold ``n11`` (the pairs where both flipped).
    """
    t = row.test
    if t is None or t.pairs == 0 or t.n11 is None:
        return None
    q = Question(t.n10 / t.pairs, t.n01 / t.pairs, t.n11 / t.pairs)
    if design.effect is None:
        return [(q.p10 + q.p11, q.p01 + q.p11, 1.0)]
    states, _ = question_states(q, design.effect, design.toward or design.alternative)
    return [(a + c, b + c, w) for a, b, c, w in states]


def copies_note(rows: Sequence[VerdictRecord], design: Design) -> str | None:
    """With ``--effect`` on a pilot whose every question's seeds repeat, what that does to a
    per-question plan, in words (None otherwise).
    """
    questions = [q for r in rows if (q := question_of(r)) is not None]
    if design.effect is None or not questions or not all(q.repeats for q in questions):
        return None
    return (
        "every pilot question's seeds repeat (copies): an effect moves a question whole or not "
        "at all, so more seeds add nothing past the few its test needs; a question's own test "
        "is significant about as often as its question moved (or its one draw differed the "
        "test's way), and more questions, not more seeds, are what helps"
    )


def towards(toward: float, away: float, alternative: Alternative) -> bool:
    """Whether rates ``toward`` (the arm's side) against ``away`` show an effect the test's way:
    without one no sample size gives more power than the level.
    """
    if alternative == "less":
        return away > toward
    if alternative == "two-sided":
        return toward != away
    return toward > away


def left_out_note(within: int, out: int, untested: int) -> str | None:
    """The scenarios a per-scenario plan's figure does not cover, in words."""
    parts = []
    if out:
        parts.append(f"{out} out of reach")
    if untested:
        parts.append(f"{untested} without a test to plan from (left out)")
    if not parts:
        return None
    return f"the figure is for the {within} scenario(s) within reach; {', '.join(parts)}"
