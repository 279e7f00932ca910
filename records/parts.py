"""The parts verdict, summary and bisection records are built from (one base model, the
interval, the test and its neighbours).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from counterfact.records.vocabulary import (
    Adjustment,
    Alternative,
    DoubtCode,
    Family,
    Pairing,
    StoppedFor,
)


class _Record(BaseModel):
    # from_attributes: a record is read straight off the domain result it records (a frozen
    # dataclass with the same field names), so no field list is kept in step by hand
    model_config = ConfigDict(
        frozen=True, extra="forbid", populate_by_name=True, from_attributes=True
    )


class SimilarityRecord(_Record):
    """Mean, min, max and population stdev of similarities to the reference."""

    mean: float
    min: float
    max: float
    stdev: float


class CostRecord(_Record):
    """One cost key over the runs that reported it."""

    median: float
    min: float
    max: float
    reported: int | None = None
    """How many runs reported the key (null in version-1 records)."""


class ApplicationRecord(_Record):
    """The manifest check (rule 6)."""

    checked: bool
    """False when no run reported a manifest or the arm declares no facets."""
    applied: bool | None
    """Null when not checked."""
    manifests_seen: int
    """How many successful runs reported a manifest."""
    mismatches: list[dict[str, Any]]
    """``{facet, declared, observed?}``; no ``observed`` when the manifest lacked the key. In the
    order of the lowest seed that showed each; at most 50 (see ``mismatches_omitted``)."""
    mismatches_omitted: int = 0
    """Further distinct mismatches, counted but not listed."""
    manifests_mismatched: int | None = None
    """How many of the manifests showed at least one mismatch (null in older records)."""


class DoubtRecord(_Record):
    """One reason for doubt about a verdict (rule 25): what kind, how many runs or probes, which
    seeds witness it.
    """

    code: DoubtCode
    count: int
    """Runs (or probes, pairs) it concerns; a floor when ``at_least``."""
    at_least: bool = False
    """True when ``count`` is a floor (the sweep stopped before every run was seen)."""
    seeds: list[int] = Field(default_factory=list)
    """The seeds that witness it, lowest first, at most 20 (empty where it has no seeds)."""
    seeds_omitted: int = 0
    """Witnessing seeds beyond those listed."""
    detail: str
    """The doubt in a few words."""


class Interval(_Record):
    """A two-sided confidence interval: the one interval type every record uses."""

    low: float
    high: float
    level: float
    """Confidence level, e.g. 0.95."""
    method: str
    """How it was computed (``clopper-pearson``, ``Newcombe paired (method 10)`` ...)."""


IntervalRecord = Interval
"""The flip rate's interval (``flip_rate_ci``): an :class:`Interval`; the old name."""


class CostReadingRecord(_Record):
    """rule 11's reading of one ablation arm."""

    key: str
    """The cost key judged for consistency, the placebo band and the cause."""
    saved: dict[str, float | None]
    """Baseline median − arm median per cost key; null when either side lacks the key."""
    consistent: bool
    """Every rerun of the arm used no more of ``key`` than the baseline median."""
    stable: bool
    """Consistent, and a placebo band existed to clear."""
    cost_cause: bool
    """Stable, saved >= 1 and saved > the band's max."""
    placebo_band: list[float]
    """``saved[key]`` of the other non-confirmed ablation arms (leave-one-out)."""
    placebo_max: float | None
    reported: int | None = None
    """How many of the arm's runs reported ``key`` (the reading rests on those)."""


class AdjustmentRecord(_Record):
    """How a p-value was adjusted for multiplicity (rule 15)."""

    method: Adjustment
    family: Family
    family_size: int
    """Tests in the family (every (scenario, challenger) of the sweep, or of the scenario)."""


class ChangedToRecord(_Record):
    """One output a flipped run gave instead of the reference."""

    output: str
    """The output (cut to 500 characters)."""
    count: int
    """Flipped runs that gave it."""
    seeds: list[int]
    """Their seeds (the first 20)."""


class TestRecord(_Record):
    """The test beside the tier (rules 13-15)."""

    method: str
    pairing: Pairing
    alternative: Alternative = "greater"
    """``greater``: does the arm flip more often than the baseline; ``less``: less often (a fix);
    ``two-sided``: either."""
    n10: int
    """Pairs where the arm flipped and the baseline did not."""
    n01: int
    """Pairs where the baseline flipped and the arm did not."""
    pairs: int
    pairs_excluded: int
    """Pair 0 when the reference is the baseline's own seed-0 output (rule 13)."""
    p_value: float
    p_adjusted: float | None = None
    alpha: float
    adjustment: AdjustmentRecord | None = None
    min_attainable_p: float
    """The smallest p-value any outcome at these samples could give; above alpha the verdict is
    ``underpowered``."""
    e_value: float | None = None
    """Sequential sweeps: the e-value the test rests on (``p_value`` is ``min(1, 1/e_value)``)."""
    n11: int | None = None
    """Pairs where both flipped (null in records before version 5)."""


class SequentialRecord(_Record):
    """Why and where a challenger stopped sampling (rule 19)."""

    stopped_for: StoppedFor
    """``significant``: the e-value reached ``threshold``; ``futile``: no outcome of the seeds left
    up to ``max_samples`` could lift it to ``1/alpha``, or (with ``min_effect``) an effect of at
    least ``min_effect`` was ruled out; ``max-samples``: the cap; ``untestable``: no reference to
    score against."""
    seeds_used: int
    """Seeds ``0..seeds_used-1`` the verdict rests on."""
    max_samples: int
    e_value: float
    threshold: float
    """The e-value at which the arm is significant whatever its family shows."""
    n10: int
    n01: int
    min_effect: float | None = None
    """``sequential.min_effect``: the least flip-rate difference worth finding (null without)."""
    futility_e_value: float | None = None
    """With ``min_effect``: the e-value against "the effect is at least ``min_effect``"; the arm
    stops as futile once it reaches ``1/alpha``."""
    futile_because: Literal["unreachable", "below-min-effect"] | None = None
    """Why a futile arm stopped: ``unreachable`` (the threshold was out of reach by the cap) or
    ``below-min-effect`` (an effect of ``min_effect`` or more was ruled out)."""


class EffectRecord(Interval):
    """Paired flip-rate difference, arm minus baseline, with its interval (rule 16)."""

    diff: float
    method: str = "Newcombe paired (method 10)"


class SimilarityTestRecord(_Record):
    """Paired one-sided test on similarities (rule 16), information only."""

    statistic: float
    p_value: float
    method: str = "Wilcoxon signed-rank (one-sided, paired)"


def renamed_reading(data: Any) -> Any:
    """A secondary block written before its verdict word was renamed (``statistical_verdict``)."""
    if isinstance(data, dict) and "statistical_verdict" in data:
        data = dict(data)
        data.setdefault("secondary_reading", data.pop("statistical_verdict"))
    return data
