"""One (scenario, arm)'s judgement as it travels from assessment to its record.

:mod:`~counterfact.verdicts.assess` builds a :class:`Judgement` per row: its tier-level fields
(a validated :class:`~counterfact.records.verdicts.TierRecord`), the tier's claim and — decided
up front — the test it rests on (the fixed-sample test, or the e-process a sequential arm
stopped on). :func:`~counterfact.verdicts.family.adjust_family` adds nothing to it; it returns an
:class:`Adjusted` per tested row. :func:`~counterfact.verdicts.rows.verdict_rows` extends each
tier record into a :class:`~counterfact.records.VerdictRecord` (the same fields, declared once,
plus the decision, the claim and the test).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Required, TypedDict

from counterfact.records.parts import (
    AdjustmentRecord,
    ChangedToRecord,
    EffectRecord,
    SequentialRecord,
    SimilarityTestRecord,
)
from counterfact.records.verdicts import TierRecord
from counterfact.records.vocabulary import Reason, StatisticalVerdict
from counterfact.verdicts.standing import Doubt
from counterfact.verdicts.stats.significance import TestResult

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


def shallow(part: DataclassInstance) -> dict[str, object]:
    """A dataclass's fields by name, values as they are (``dataclasses.asdict`` deep-copies:
    slow).
    """
    return {f.name: getattr(part, f.name) for f in fields(part)}


class SeedSets(TypedDict, total=False):
    """A row's seed sets as :class:`~counterfact.records.verdicts.TierRecord` takes them: lists,
    or bitmaps (``*_bits``) above ``SEED_LIST_MAX`` declared seeds.
    """

    seeds: Required[list[int] | None]
    failed_seeds: Required[list[int] | None]
    missing_seeds: Required[list[int] | None]
    flipped_seeds: Required[list[int] | None]
    similarities: Required[list[float] | None]
    seeds_bits: str | None
    failed_seeds_bits: str | None
    missing_seeds_bits: str | None
    flipped_seeds_bits: str | None
    similarities_omitted: bool


class Explained(TypedDict, total=False):
    """What a challenger's answer changed to, and how its facets differ, as
    :class:`~counterfact.records.verdicts.TierRecord` takes them (empty: the baseline).
    """

    changed_to: list[ChangedToRecord] | None
    changed_to_others: int | None
    facets_diff: dict[str, list[Any]] | None


@dataclass(frozen=True)
class Judgement:
    """Everything judged about one (scenario, arm), before its family is known."""

    scenario: str
    arm: str
    tier: TierRecord
    """The row's tier-level fields (the tier's verdict and reason, seeds, flips, similarity,
    cost, ...), validated: its verdict record adds the decision, the claim and the test."""
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
