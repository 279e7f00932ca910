"""Without ``--effect``: the effect a per-question plan (more seeds on the pilot's own
questions) is for — the end of the pilot's interval nearer 0, not its estimate (issue 43).

A plan for the pilot's own rates inherits the winner's curse: the pilots that show an effect
worth planning are those whose noise leaned the arm's way, so the plan's printed power is for an
effect larger than the true one. Measured (``scripts/calibrate_plan_question.py``, one question
x 10 seeds, a true +0.30, 400 pilots): printed 0.812, realised 0.642 (realised - printed
-0.170 [-0.202, -0.138]). The bound is the interval of the pilot's seeds pooled over its
questions (Newcombe's paired interval on the summed pairs, as the arm-level interval hulls it;
one question: Newcombe's on its own pairs): the interval for *these* questions, which is
what more seeds on them can show. The plan is then the ``--effect`` plan at that size: the
pilot's own difference removed and the bound added per question
(:func:`counterfact.verdicts.planning.design.cells_of`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from counterfact.records.verdicts import VerdictRecord
from counterfact.records.vocabulary import Alternative
from counterfact.verdicts.planning.pilot import pilot_effect
from counterfact.verdicts.stats.significance import effect_of_counts


@dataclass(frozen=True)
class PilotBound:
    """Without ``--effect``: the effect an eval-set plan is for (module docstring)."""

    size: float
    """The end of the pilot's arm-level interval nearer 0, as a size in ``direction``."""
    direction: Alternative
    """``greater`` (the arm flips more) or ``less``."""
    estimate: float
    """The pilot's own estimate (arm minus baseline flip rate)."""
    level: float
    """The interval's level."""

    def text(self) -> str:
        """``+0.061, the low end of the pilot's 90% interval (its estimate +0.375)``."""
        end = "low" if self.direction == "greater" else "high"
        signed = self.size if self.direction == "greater" else -self.size
        shown = f"{signed:+.3f}" if abs(signed) >= 0.01 else f"{signed:+.2g}"
        return (
            f"{shown}, the {end} end of the pilot's {self.level:.0%} interval for its "
            f"effect (its estimate {self.estimate:+.3f})"
        )


@dataclass(frozen=True)
class SeedsBound(PilotBound):
    """The effect a per-question plan is for, when ``--effect`` is not given: the end nearer 0
    of the pilot's seeds interval (pooled over its questions), not its arm-level one.
    """

    def text(self) -> str:
        """``+0.061, the low end of the 90% interval of the pilot's seeds (estimate +0.300)``."""
        end = "low" if self.direction == "greater" else "high"
        signed = self.size if self.direction == "greater" else -self.size
        return (
            f"{signed:+.3f}, the {end} end of the {self.level:.0%} interval of the pilot's seeds "
            f"(their estimate {self.estimate:+.3f})"
        )


def seeds_bound(
    rows: Sequence[VerdictRecord], alternative: Alternative, alpha: float
) -> SeedsBound | None:
    """The end of the pilot's seeds interval nearer 0, when the interval leaves out 0 on a side
    the test looks at; None otherwise (no effect to plan for without ``--effect``). The interval
    is two-sided at ``1 - 2 alpha`` for a one-sided test (a one-sided ``1 - alpha`` bound), at
    ``1 - alpha`` for a two-sided one, as the arm-level interval is.
    """
    tested = [r.test for r in rows if r.test is not None and r.test.pairs > 0]
    if not tested:
        return None
    if len(tested) == 1:  # one question: Newcombe's interval on its own pairs
        t = tested[0]
        level = 1 - alpha if alternative == "two-sided" else 1 - 2 * alpha
        e = effect_of_counts(t.n10, t.n01, t.n11 or 0, t.pairs, level)
        if e is None:
            return None
        estimate, low, high = e.diff, e.low, e.high
    else:
        seen = pilot_effect(rows, alternative, alpha)
        if seen is None:
            return None
        level, low, high = seen.level, seen.seeds_low, seen.seeds_high
        estimate = sum(t.n10 - t.n01 for t in tested) / sum(t.pairs for t in tested)
    if low > 0 and alternative != "less":
        return SeedsBound(low, "greater", estimate, level)
    if high < 0 and alternative != "greater":
        return SeedsBound(-high, "less", estimate, level)
    return None


def bound_note(bound: SeedsBound | None, reached: bool) -> str:
    """What the per-question plan is for, or why it has none."""
    if bound is None:
        return (
            "the interval of the pilot's seeds for its effect includes 0 (or lies against the "
            "test's direction): no per-question plan from its own rates keeps a promise (pass "
            "--effect D to plan for the least effect worth finding)"
        )
    if not reached:
        return (
            f"no per-question plan from this pilot keeps its promise: its seeds bound the "
            f"effect only at {bound.text()}; pass --effect D, or run more seeds in the pilot"
        )
    return (
        f"more seeds planned for an effect of {bound.text()}, not for the estimate: a pilot "
        "that shows an effect leans away from 0, and the power holds for any effect at least as "
        "far from 0 as the bound"
    )
