"""Moved to :mod:`counterfact.records.verdicts` (the record contract's own floor); kept so old
imports work for a release.
"""

from counterfact.records.bisect import (
    BISECT_SCHEMA_VERSION,
    BisectProbeRecord,
    BisectRecord,
    ConfirmationRecord,
    CulpritCheckRecord,
)
from counterfact.records.parts import (
    AdjustmentRecord,
    ApplicationRecord,
    ChangedToRecord,
    CostReadingRecord,
    CostRecord,
    DoubtRecord,
    EffectRecord,
    Interval,
    IntervalRecord,
    SequentialRecord,
    SimilarityRecord,
    SimilarityTestRecord,
    TestRecord,
)
from counterfact.records.summary import (
    SUMMARY_SCHEMA_VERSION,
    BudgetRecord,
    ConcurrencyRecord,
    NullBandRecord,
    PooledEffectRecord,
    PooledRecord,
    ReferenceRecord,
    RollupRecord,
    ScenarioSummary,
    SequentialSummary,
    StatisticsRecord,
    SweepSummary,
)
from counterfact.records.verdicts import VERDICT_SCHEMA_VERSION, VerdictRecord
from counterfact.records.vocabulary import Family

__all__ = [
    "BISECT_SCHEMA_VERSION",
    "SUMMARY_SCHEMA_VERSION",
    "VERDICT_SCHEMA_VERSION",
    "AdjustmentRecord",
    "ApplicationRecord",
    "BisectProbeRecord",
    "BisectRecord",
    "BudgetRecord",
    "ChangedToRecord",
    "ConcurrencyRecord",
    "ConfirmationRecord",
    "CostReadingRecord",
    "CostRecord",
    "CulpritCheckRecord",
    "DoubtRecord",
    "EffectRecord",
    "Family",
    "Interval",
    "IntervalRecord",
    "NullBandRecord",
    "PooledEffectRecord",
    "PooledRecord",
    "ReferenceRecord",
    "RollupRecord",
    "ScenarioSummary",
    "SequentialRecord",
    "SequentialSummary",
    "SimilarityRecord",
    "SimilarityTestRecord",
    "StatisticsRecord",
    "SweepSummary",
    "TestRecord",
    "VerdictRecord",
]
