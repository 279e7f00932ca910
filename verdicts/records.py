"""Moved to :mod:`counterfact.records` (``records.verdicts``, ``records.summary``,
``records.bisect``, ``records.parts``, ``records.vocabulary``, ``records.execution``); importing
a name from here warns, and this path goes in counterfact 0.2.0
(:data:`counterfact.deprecation.REMOVED_IN`).
"""

from counterfact.deprecation import relocated

_MOVED_TO = {
    "counterfact.records.bisect": (
        "BISECT_SCHEMA_VERSION",
        "BisectProbeRecord",
        "BisectRecord",
        "ConfirmationRecord",
        "CulpritCheckRecord",
    ),
    "counterfact.records.parts": (
        "AdjustmentRecord",
        "ApplicationRecord",
        "ChangedToRecord",
        "CostReadingRecord",
        "CostRecord",
        "DoubtRecord",
        "EffectRecord",
        "Interval",
        "IntervalRecord",
        "SequentialRecord",
        "SimilarityRecord",
        "SimilarityTestRecord",
        "TestRecord",
    ),
    "counterfact.records.execution": (
        "BudgetRecord",
        "ConcurrencyRecord",
    ),
    "counterfact.records.summary": (
        "NullBandRecord",
        "PooledEffectRecord",
        "PooledRecord",
        "ReferenceRecord",
        "RollupRecord",
        "SUMMARY_SCHEMA_VERSION",
        "ScenarioSummary",
        "SequentialSummary",
        "StatisticsRecord",
        "SweepSummary",
    ),
    "counterfact.records.verdicts": (
        "VERDICT_SCHEMA_VERSION",
        "VerdictRecord",
    ),
    "counterfact.records.vocabulary": ("Family",),
}
__getattr__ = relocated(
    __name__, {name: module for module, names in _MOVED_TO.items() for name in names}
)
