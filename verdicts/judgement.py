"""One (scenario, arm)'s judgement as it travels from assessment to its record.

:mod:`~counterfact.verdicts.assess` builds a :class:`Judgement` per row: its tier-level fields,
the tier's claim and — decided up front — the test it rests on (the fixed-sample test, or the
e-process a sequential arm stopped on). :func:`~counterfact.verdicts.family.adjust_family` adds
nothing to it; it returns an :class:`Adjusted` per tested row. :func:`~counterfact.verdicts.rows.
verdict_rows` converts each pair into a validated :class:`~counterfact.records.VerdictRecord`, once.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Literal

from counterfact.records.parts import (
    AdjustmentRecord,
    ApplicationRecord,
    ChangedToRecord,
    CostReadingRecord,
    CostRecord,
    EffectRecord,
    Interval,
    SequentialRecord,
    SimilarityRecord,
    SimilarityTestRecord,
)
from counterfact.records.vocabulary import (
    CostClass,
    InterventionKind,
    Reason,
    StatisticalVerdict,
    Verdict,
)
from counterfact.verdicts.standing import Doubt
from counterfact.verdicts.stats.significance import TestResult

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


def shallow(part: DataclassInstance) -> dict[str, object]:
    """A dataclass's fields by name, values as they are (``dataclasses.asdict`` deep-copies:
    slow).
    """
    return {f.name: getattr(part, f.name) for f in fields(part)}


@dataclass(frozen=True)
class SeedSets:
    """A row's seed sets: lists, or bitmaps (``*_bits``) above ``SEED_LIST_MAX`` declared seeds."""

    seeds: list[int] | None
    failed_seeds: list[int] | None
    missing_seeds: list[int] | None
    flipped_seeds: list[int] | None
    similarities: list[float] | None
    seeds_bits: str | None = None
    failed_seeds_bits: str | None = None
    missing_seeds_bits: str | None = None
    flipped_seeds_bits: str | None = None
    similarities_omitted: bool = False


@dataclass(frozen=True)
class Explained:
    """What a challenger's answer changed to, and how its facets differ (None: the baseline)."""

    changed_to: list[ChangedToRecord] | None = None
    changed_to_others: int | None = None
    facets_diff: dict[str, list[Any]] | None = None


@dataclass(frozen=True)
class TierRow:
    """A row's tier-level fields: all its record holds but the claim, the test and the standing."""

    scenario: str
    arm: str
    is_baseline: bool
    intervention: InterventionKind
    placebo: Literal["same-seeds", "fresh-seeds"] | None
    verdict: Verdict | None
    reason: Reason | None
    samples: int
    samples_declared: int
    seed_sets: SeedSets
    flips: int | None
    similarity: SimilarityRecord | None
    outside_null_band: bool | None
    application: ApplicationRecord
    cost: dict[str, CostRecord] | None
    runs_retried: int
    runs_from_cache: int
    cost_reading: CostReadingRecord | None
    cost_class: CostClass | None
    cost_class_withheld: Reason | None
    flip_rate_ci: Interval | None
    explained: Explained
    check: str | None
    outputs_as_baseline: bool | None = None

    def record_fields(self) -> dict[str, object]:
        """The fields as the verdict record takes them (seed sets and explanation inline)."""
        found = shallow(self)
        del found["seed_sets"], found["explained"]
        return found | shallow(self.seed_sets) | shallow(self.explained)


@dataclass(frozen=True)
class Judgement:
    """Everything judged about one (scenario, arm), before its family is known."""

    scenario: str
    arm: str
    tier: TierRow
    """The row's tier-level fields (verdict, reason, seeds, flips, similarity, cost, ...)."""
    claim: str
    """The tier's claim; the test's and the stopping sentence join it in the record."""
    test: TestResult | None = None
    """The test the statistical verdict rests on (fixed-sample or e-process); None for the
    baseline, with no reference, or when withheld."""
    effect: EffectRecord | None = None
    similarity_test: SimilarityTestRecord | None = None
    withheld: Reason | None = None
    """Why there is no test (the arm or the baseline did not take effect)."""
    sequential: SequentialRecord | None = None
    """Where and why a sequential challenger stopped."""
    doubts: tuple[Doubt, ...] = ()
    """Doubts from the runs, the manifests, the reference and the comparator (the test's join
    them once its family is known)."""
    unassessed: str | None = None
    """Why the row gets no standing (the baseline; no successful run); None: it is assessed."""


@dataclass(frozen=True)
class Adjusted:
    """A tested row's place in its family: the adjusted p and the statistical verdict."""

    p_adjusted: float
    adjustment: AdjustmentRecord
    verdict: StatisticalVerdict
