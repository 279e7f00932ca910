"""What ``counterfact plan`` plans for, shared by its three planners (paired, unpaired,
sequential): the sweep's design, one challenger's plan, and the rates a pilot row implies.

Per scenario, the pair-cell rates come from its test record (``n10 / pairs``, ``n01 / pairs``),
or, with a declared effect ``d``, the baseline-side rate of the pilot and the other side raised by
``d`` (``greater``/``two-sided``: ``p10 = p01 + d``; ``less``: ``p01 = p10 + d``). The unpaired
planner uses the arm's and the baseline's flip rates instead (``--effect d``: the arm's rate is
the baseline's plus ``d``, minus under ``less``).
"""

from __future__ import annotations

from dataclasses import dataclass

from counterfact.records.plan import ScenarioPlan
from counterfact.records.verdicts import VerdictRecord
from counterfact.records.vocabulary import Adjustment, Alternative, Pairing
from counterfact.verdicts.planning.power import CAP, Cells
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
    """The effect to plan for (``--effect``): the arm's side raised by it; None plans for the
    pilot's own rates."""


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


def nothing_to_plan() -> Planned:
    """The plan of a challenger none of whose scenarios has a test."""
    return Planned(None, None, "none", None, [], "no scenario has a test to plan from")


def excluded(row: VerdictRecord) -> int:
    """Seeds of the row that are no pair (seed 0 when it is the reference)."""
    return row.test.pairs_excluded if row.test is not None else 0


def cells_of(row: VerdictRecord, design: Design) -> Cells | None:
    """The pair-cell rates a scenario's row implies under the design's effect (None: it has no
    test to plan).
    """
    t = row.test
    if t is None or t.pairs == 0:
        return None
    p10, p01 = t.n10 / t.pairs, t.n01 / t.pairs
    effect = design.effect
    if effect is not None:
        if design.alternative == "less":
            p01 = min(p10 + effect, 1.0 - p10)
        else:
            p10 = min(p01 + effect, 1.0 - p01)
    return Cells(p10, p01)


def rates_of(row: VerdictRecord, design: Design) -> tuple[float, float] | None:
    """The arm's and the baseline's flip rates a scenario's row implies under the design's
    effect (unpaired plans); None without a test, or on a record too old to hold ``n11`` (the
    pairs where both flipped).
    """
    t = row.test
    if t is None or t.pairs == 0 or t.n11 is None:
        return None
    arm, base = (t.n10 + t.n11) / t.pairs, (t.n01 + t.n11) / t.pairs
    effect = design.effect
    if effect is not None:
        less = design.alternative == "less"
        arm = max(base - effect, 0.0) if less else min(base + effect, 1.0)
    return arm, base


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
