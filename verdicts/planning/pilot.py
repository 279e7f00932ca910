"""Whether a challenger's pilot effect is one to plan for (``counterfact plan``, issue 39 item 2).

A plan for the pilot's own rates is a plan to detect the effect the pilot saw. When that effect's
interval (the arm-level one: the sign-flip score interval over questions, or with one question
the row's Newcombe interval; at the level the verdicts print) includes 0, the effect may be the
pilot's noise, and its plan is a plan to detect noise: it is withheld, and only a declared
``--effect`` is planned. An interval wholly on the other side of 0 from the test's direction (a
fix under the default one-sided test for breaks) is an effect the test cannot find: the plan
says so and names the direction setting. A placebo arm is the false-alarm (or determinism) check,
never a power target, whatever ``--effect`` says.

With few questions the arm-level interval can hold 0 while the seeds, pooled, do not (3 questions
at 24 seeds each): then only the eval-set plan (how many questions) is withheld, and the
per-question plan (more seeds on these questions) stands; it is withheld too when the pooled
seeds' interval (Newcombe on the summed pairs) holds 0 as well, or the seeds never varied
(copies: more seeds add nothing).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from counterfact.records.verdicts import VerdictRecord
from counterfact.records.vocabulary import Alternative
from counterfact.verdicts.stats.clustered import QuestionCounts, clustered_test
from counterfact.verdicts.stats.significance import effect_of_counts

Withheld = Literal["placebo", "noise", "other-direction"]


@dataclass(frozen=True)
class PilotEffect:
    """The pilot's arm-level effect (arm minus baseline flip rate) and its interval."""

    diff: float
    low: float
    high: float
    level: float
    seeds_low: float
    """The pooled seeds' interval (Newcombe on the summed pairs), at the same level."""
    seeds_high: float

    @property
    def holds_zero(self) -> bool:
        """The arm-level interval includes 0."""
        return self.low <= 0 <= self.high

    def text(self) -> str:
        """``+0.125 [-0.024, +0.274]`` (90% interval)."""
        return f"{self.diff:+.3f} [{self.low:+.3f}, {self.high:+.3f}] ({self.level:.0%} interval)"


def pilot_effect(
    rows: Sequence[VerdictRecord], alternative: Alternative, alpha: float
) -> PilotEffect | None:
    """The arm-level effect of one challenger's rows (None: no tested question)."""
    tested = [r for r in rows if r.test is not None and r.test.pairs > 0]
    if len(tested) == 1:
        e = tested[0].effect
        return None if e is None else PilotEffect(e.diff, e.low, e.high, e.level, e.low, e.high)
    counts = [
        QuestionCounts(r.scenario, r.test.n10, r.test.n01, r.test.n11 or 0, r.test.pairs)
        for r in tested
        if r.test is not None
    ]
    t = clustered_test(counts, alternative, alpha)
    if t is None:
        return None

    pooled = effect_of_counts(
        sum(c.n10 for c in counts),
        sum(c.n01 for c in counts),
        sum(c.n11 for c in counts),
        sum(c.pairs for c in counts),
        t.level,
    )
    # seeds that never vary are copies: pooling them claims nothing the questions do not
    low, high = (t.low, t.high) if pooled is None or not t.seeds_vary else (pooled.low, pooled.high)
    return PilotEffect(t.diff, t.low, t.high, t.level, low, high)


def withheld(
    rows: Sequence[VerdictRecord],
    effect: PilotEffect | None,
    alternative: Alternative,
    declared: float | None,
) -> tuple[Withheld, str] | None:
    """Why no power target is planned for this challenger, and the words; None: plan it."""
    kind = next((r.placebo for r in rows if r.placebo is not None), None)
    seen = "" if effect is None else f"its effect {effect.text()} "
    if kind == "fresh-seeds":
        return "placebo", f"placebo: {seen}is the noise (false-alarm) check; no power target"
    if kind == "same-seeds":
        return "placebo", f"placebo (same seeds): {seen}is the determinism check; no power target"
    if declared is not None or effect is None:
        return None

    # the arm-level interval, or (too few questions for it to exclude 0) the pooled seeds'
    fixes = effect.high < 0 or effect.seeds_high < 0
    breaks = effect.low > 0 or effect.seeds_low > 0
    if (alternative == "greater" and fixes) or (alternative == "less" and breaks):
        way, other = ("fixes", "less") if fixes else ("breaks", "greater")
        return "other-direction", (
            f"the pilot shows an effect in the other direction: the arm {way} "
            f"({effect.text()}), which the sweep's test (statistics.alternative: "
            f"{alternative}) does not look for; to test for it, plan with --alternative {other} "
            f"and set statistics.alternative: {other} (or two-sided) for the sweep"
        )
    if effect.holds_zero and effect.seeds_low <= 0 <= effect.seeds_high:
        return "noise", (
            f"the pilot's effect {effect.text()} includes 0: it may be the pilot's noise, and a "
            "plan for it would plan to detect noise; pass --effect D to plan for the least "
            "effect worth finding"
        )
    return None


def few_questions_note(effect: PilotEffect | None, declared: float | None) -> str | None:
    """When only the eval-set plan is withheld (the arm-level interval holds 0, the pooled
    seeds' does not), the words; None otherwise.
    """
    if declared is not None or effect is None or not effect.holds_zero:
        return None
    return (
        f"no eval-set plan: the arm-level effect {effect.text()} includes 0 (too few questions "
        "to tell it from noise; pass --effect D to plan questions for the least effect worth "
        "finding); the plan below is for more seeds on these questions only"
    )
