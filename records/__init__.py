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

Names load on first use (PEP 562), each from its own module: a caller that needs one of them (the
engine a constant of :mod:`counterfact.records.runs`, the viewer :mod:`counterfact.records.paths`)
does not build every record model (about 0.2 s) to get it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if __name__ != "counterfact.records":  # one import name per module: see docs/architecture.md
    msg = (
        f"import counterfact.records, not {__name__!r}: the top-level folder records/ is the "
        "subpackage counterfact.records, and a second name would load every module twice"
    )
    raise ImportError(msg)

if TYPE_CHECKING:
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

_WHERE: dict[str, str] = {
    "ARM_SCHEMA_VERSION": "counterfact.records.arms",
    "ArmVerdictRecord": "counterfact.records.arms",
    "BISECT_SCHEMA_VERSION": "counterfact.records.bisect",
    "BisectRecord": "counterfact.records.bisect",
    "BLAME_SCHEMA_VERSION": "counterfact.records.blame",
    "BlameLine": "counterfact.records.blame",
    "BlameRecord": "counterfact.records.blame",
    "RecordFileError": "counterfact.records.files",
    "read_arms": "counterfact.records.files",
    "read_bisect": "counterfact.records.files",
    "read_live": "counterfact.records.files",
    "read_runs": "counterfact.records.files",
    "read_summary": "counterfact.records.files",
    "read_verdicts": "counterfact.records.files",
    "Fingerprint": "counterfact.records.fingerprint",
    "LIVE_SCHEMA_VERSION": "counterfact.records.live",
    "LiveState": "counterfact.records.live",
    "Interval": "counterfact.records.parts",
    "LIVE_FILE": "counterfact.records.paths",
    "RunPaths": "counterfact.records.paths",
    "PLAN_SCHEMA_VERSION": "counterfact.records.plan",
    "PlanRecord": "counterfact.records.plan",
    "RUN_SCHEMA_VERSION": "counterfact.records.runs",
    "RunError": "counterfact.records.runs",
    "RunRecord": "counterfact.records.runs",
    "BudgetRecord": "counterfact.records.execution",
    "ConcurrencyRecord": "counterfact.records.execution",
    "ExecutionRecord": "counterfact.records.execution",
    "Provenance": "counterfact.records.summary",
    "SUMMARY_SCHEMA_VERSION": "counterfact.records.summary",
    "SweepSummary": "counterfact.records.summary",
    "VERDICT_SCHEMA_VERSION": "counterfact.records.verdicts",
    "VerdictRecord": "counterfact.records.verdicts",
}

_SUBMODULES = frozenset(
    {
        "arms",
        "bisect",
        "blame",
        "execution",
        "files",
        "fingerprint",
        "live",
        "parts",
        "paths",
        "plan",
        "runlines",
        "runs",
        "seedsets",
        "summary",
        "verdicts",
        "vocabulary",
    }
)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        if name in _SUBMODULES:  # counterfact.records.vocabulary etc., as an attribute
            return importlib.import_module(f"{__name__}.{name}")
        msg = f"module 'counterfact.records' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, *_SUBMODULES})


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
