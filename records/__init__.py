"""The record contract: what counterfact writes and other tools read.

``runs.jsonl`` lines are :class:`RunRecord`; ``verdicts.jsonl`` lines are :class:`VerdictRecord`;
``arms.jsonl`` lines are :class:`ArmVerdictRecord` (one verdict per challenger over the question
set); ``summary.json`` is :class:`SweepSummary`, which embeds what its runs came to as an
:class:`ExecutionRecord` (as ``bisect.json`` and ``blame.json`` do); ``bisect.json`` is
:class:`BisectRecord`; ``blame.json`` is :class:`BlameRecord` and a ``blame.jsonl`` line
:class:`BlameLine`;
``sweep.json`` (what a run directory's records mean) is :class:`Fingerprint`, and every record
kind carries a :class:`Provenance`. Their
closed vocabularies live in :mod:`counterfact.records.vocabulary`, the seed-set encoding in
:mod:`counterfact.records.seedsets`, the files' names in :mod:`counterfact.records.paths`
(:class:`RunPaths`), and their readers in :mod:`counterfact.records.files`.

This package imports pydantic and the standard library only (a test pins it), so a notebook or
another tool can load a verdict line without numpy, scipy, rapidfuzz, pandas or Ray::

    from counterfact.records import read_verdicts
    rows = read_verdicts("runs/quickstart")
"""

if __name__ != "counterfact.records":  # one import name per module: see docs/architecture.md
    msg = (
        f"import counterfact.records, not {__name__!r}: the top-level folder records/ is the "
        "subpackage counterfact.records, and a second name would load every module twice"
    )
    raise ImportError(msg)

from counterfact.records.arms import ARM_SCHEMA_VERSION, ArmVerdictRecord
from counterfact.records.bisect import BISECT_SCHEMA_VERSION, BisectRecord
from counterfact.records.blame import BLAME_SCHEMA_VERSION, BlameLine, BlameRecord
from counterfact.records.execution import BudgetRecord, ConcurrencyRecord, ExecutionRecord
from counterfact.records.files import (
    RecordFileError,
    read_arms,
    read_bisect,
    read_live,
    read_runs,
    read_summary,
    read_verdicts,
)
from counterfact.records.fingerprint import Fingerprint
from counterfact.records.live import LIVE_SCHEMA_VERSION, LiveState
from counterfact.records.parts import Interval
from counterfact.records.paths import LIVE_FILE, RunPaths
from counterfact.records.plan import PLAN_SCHEMA_VERSION, PlanRecord
from counterfact.records.runs import RUN_SCHEMA_VERSION, RunError, RunRecord
from counterfact.records.summary import SUMMARY_SCHEMA_VERSION, Provenance, SweepSummary
from counterfact.records.verdicts import VERDICT_SCHEMA_VERSION, VerdictRecord

__all__ = [
    "ARM_SCHEMA_VERSION",
    "BISECT_SCHEMA_VERSION",
    "BLAME_SCHEMA_VERSION",
    "LIVE_FILE",
    "LIVE_SCHEMA_VERSION",
    "PLAN_SCHEMA_VERSION",
    "RUN_SCHEMA_VERSION",
    "SUMMARY_SCHEMA_VERSION",
    "VERDICT_SCHEMA_VERSION",
    "ArmVerdictRecord",
    "BisectRecord",
    "BlameLine",
    "BlameRecord",
    "BudgetRecord",
    "ConcurrencyRecord",
    "ExecutionRecord",
    "Fingerprint",
    "Interval",
    "LiveState",
    "PlanRecord",
    "Provenance",
    "RecordFileError",
    "RunError",
    "RunPaths",
    "RunRecord",
    "SweepSummary",
    "VerdictRecord",
    "read_arms",
    "read_bisect",
    "read_live",
    "read_runs",
    "read_summary",
    "read_verdicts",
]
