"""One (scenario, arm)'s judgement as it travels from assessment to its record.

:mod:`~counterfact.verdicts.assess` builds a :class:`Judgement` per row: its tier-level fields,
the tier's claim and — decided up front — the test it rests on (the fixed-sample test, or the
e-process a sequential arm stopped on). :func:`~counterfact.verdicts.family.adjust_family` adds
nothing to it; it returns an :class:`Adjusted` per tested row. :func:`~counterfact.verdicts.rows.
verdict_rows` converts each pair into a validated :class:`~counterfact.records.VerdictRecord`, once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from counterfact.records.parts import (
    AdjustmentRecord,
    EffectRecord,
    SequentialRecord,
    SimilarityTestRecord,
)
from counterfact.records.vocabulary import Reason, StatisticalVerdict
from counterfact.verdicts.standing import Doubt
from counterfact.verdicts.stats.significance import TestResult


@dataclass(frozen=True)
class Judgement:
    """Everything judged about one (scenario, arm), before its family is known."""

    scenario: str
    arm: str
    fields: Mapping[str, Any]
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
