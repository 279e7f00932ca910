"""Arm-level verdict records: one per challenger over the whole question set (``arms.jsonl``,
and ``summary.json``'s ``arms``). The per-question rows of ``verdicts.jsonl`` are the detail.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from counterfact.records.parts import (
    AdjustmentRecord,
    DoubtRecord,
    Interval,
    _Record,
    renamed_reading,
)
from counterfact.records.vocabulary import (
    Alternative,
    InterventionKind,
    Standing,
    StatisticalVerdict,
    Verdict,
)

ARM_SCHEMA_VERSION: Literal[2] = 2
"""Version of the arm-level record's layout: 2 added ``flips``, ``baseline_flips``,
``other_way_p``, ``arm_seeds_vary`` and ``outputs_as_baseline``, and the stratified block's
``role`` and ``holds_if``; older lines still load."""


class ArmEffectRecord(Interval):
    """The flip-rate difference (arm minus baseline) over every tested question's pairs."""

    diff: float
    """Summed ``n10 - n01`` over summed pairs (each question weighted by its scored pairs)."""


class StratifiedRecord(_Record):
    """The seed-level stratified McNemar test (secondary: it counts every seed pair as
    independent, so it overstates the evidence when a question's seeds repeat each other).
    """

    p_value: float
    p_adjusted: float
    secondary_reading: StatisticalVerdict
    """This secondary test's own reading (``role``), not the arm's verdict;
    ``statistical_verdict`` before schema 2 (read as this)."""
    disagrees: bool
    """It calls the arm significant where the test over questions does not, or the reverse."""
    role: Literal["secondary"] = "secondary"
    """Not a verdict: the arm's ``verdict`` and ``statistical_verdict`` are the headline."""
    holds_if: str = (
        "every seed pair is independent of its question's other pairs (seeds that vary "
        "independently); when a question's seeds repeat each other it overstates the evidence"
    )
    """The assumption under which this test's p-value holds."""

    @model_validator(mode="before")
    @classmethod
    def _older(cls, data: Any) -> Any:
        return renamed_reading(data)


class QuestionMoveRecord(_Record):
    """One question that moved most (for the console and the report's notable list)."""

    question: str
    moved: int
    """``n10 - n01``: the arm's extra flips on it (negative: it flipped less)."""
    pairs: int


class ArmVerdictRecord(_Record):
    """One challenger over the whole eval set: what the evidence licenses about the change."""

    schema_version: Literal[1, 2] = ARM_SCHEMA_VERSION
    arm: str
    intervention: InterventionKind
    verdict: Verdict
    """``confirmed``: the test over questions is significant (after adjustment over the
    challengers) in the direction asked; ``not-confirmed``: it is not; ``inconclusive``: no test
    (no question could be tested) or no outcome could have reached alpha (``underpowered``)."""
    statistical_verdict: StatisticalVerdict | None
    """Null when no question could be tested."""
    alternative: Alternative
    method: str
    """The test the verdict rests on, in words."""
    questions: int
    """Questions with a scored pair (the sample of the test)."""
    questions_withheld: int
    """Questions whose test was withheld (the manifests show the arm or the baseline did not
    take effect there) or that had nothing to score."""
    questions_up: int
    """Questions on which the arm flipped more often than the baseline."""
    questions_down: int
    """Questions on which it flipped less often."""
    pairs: int
    """Scored seed pairs over the tested questions."""
    effective_pairs: float
    """Pairs that independent seeds would need for the spread seen: ``pairs`` when seeds vary
    independently, the number of questions when every epoch repeats the first."""
    seeds_vary: bool
    """Some question's outcomes varied across its seeds (False: epochs are copies, and the
    questions are the whole sample)."""
    statistic: int
    """The arm's extra flips summed over questions (``sum n10 - n01``)."""
    flips: int | None = None
    """The arm's flipped seeds over the tested questions' scored pairs (``pairs``): its flip
    rate beside the baseline's (under ``expect:`` a flip is a failed check, so ``1 - flips /
    pairs`` is its pass rate). Null before schema 2."""
    baseline_flips: int | None = None
    """The baseline's flipped seeds on the same pairs. Null before schema 2."""
    other_way_p: float | None = None
    """One-sided tests only: the same test's p in the other direction (fixes under ``greater``,
    breaks under ``less``), unadjusted — an effect the test asked cannot see. Null for
    two-sided tests and before schema 2."""
    arm_seeds_vary: bool | None = None
    """The arm's own outcomes varied across the seeds of some question (False: they never did,
    as at temperature 0, so its seeds add nothing). Null before schema 2."""
    outputs_as_baseline: bool | None = None
    """Every question's outputs equal the baseline's on every seed both ran: the arm changed
    nothing the model saw. Null when no row could tell, and before schema 2."""
    p_value: float | None
    p_adjusted: float | None
    """Adjusted over the sweep's challengers (``statistics.adjust``)."""
    adjustment: AdjustmentRecord | None
    min_attainable_p: float | None
    effect: ArmEffectRecord | None
    """The effect and its interval. The interval's ``level`` is adjusted over the challengers as
    the test is: built at ``alpha / c`` with ``c = p_adjusted / p_value`` (Holm's step-down
    factor for this challenger, at most the number of challengers; the largest factor when the
    adjusted p is 1), two-sided at ``1 - 2 alpha / c`` for a one-sided test. Over several
    questions it takes its critical value from the exact test, so it leaves out 0 exactly when
    ``p_adjusted <= alpha``."""
    interval_agrees: bool | None
    """The interval excludes 0 (on the tested side) exactly when the adjusted test is
    significant. False only where two methods meet: one question's Newcombe interval beside its
    exact McNemar test, or a p at alpha to rounding; the exact p decides and the notes say so."""
    stratified: StratifiedRecord | None = None
    """The secondary seed-level test (null with one question, or in sequential sweeps)."""
    notable: list[QuestionMoveRecord] = Field(default_factory=list)
    """The questions that moved most, either way (at most 5 each)."""
    notes: list[str] = Field(default_factory=list)
    """What a reader must know: seeds that never varied, an interval that disagrees, a
    secondary test that disagrees."""
    standing: Standing
    reasons: list[DoubtRecord] = Field(default_factory=list)
    summary: str
    """The console's line for this challenger, in words."""
