"""Files written before the :class:`ExecutionRecord` was embedded (``summary.json`` 9,
``bisect.json`` 9, ``blame.jsonl`` lines of blame schema 1) still load, their flat counters lifted
into ``execution``.

``old/summary-v9.json`` and ``old/bisect-v9.json`` were written by the commit before (4638ec4):
the sweep ``bench_runners.py:varied`` (arms base and ``flips``, 4 samples, a 1,000 usd budget,
in-process) and ``find_culprits(["a", "c"], ...)`` of ``test_bisect_versions.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

from counterfact.records import BisectRecord, SweepSummary
from counterfact.records.blame import BlameLine
from counterfact.records.execution import ExecutionRecord

OLD = Path(__file__).parent / "old"


def _old(name: str) -> dict[str, object]:
    data: dict[str, object] = json.loads((OLD / name).read_text(encoding="utf-8"))
    return data


def test_a_version_9_summary_loads_with_its_counts_in_execution() -> None:
    data = _old("summary-v9.json")
    summary = SweepSummary.model_validate(data)
    ran = summary.execution
    assert summary.schema_version == 9
    assert (ran.status, ran.failure) == ("complete", None)
    assert (ran.runs_used, ran.runs_failed, ran.runs_reused, ran.runs_from_cache) == (8, 2, 0, 0)
    assert ran.budget is not None and ran.budget.limits == {"usd": 1000.0}
    assert ran.spend is not None and ran.spend.total == data["spend"]["total"]  # type: ignore[index]
    assert ran.timings is not None and ran.timings.execution_s == 0.0283
    assert ran.concurrency is None and ran.torn_line_dropped is False


def test_an_old_summary_written_again_has_no_flat_counters() -> None:
    summary = SweepSummary.model_validate(_old("summary-v9.json"))
    again = summary.model_dump(mode="json", by_alias=True)
    assert not set(ExecutionRecord.model_fields) & set(again)
    assert SweepSummary.model_validate(again) == summary


def test_a_version_9_bisect_record_loads_with_its_counts_in_execution() -> None:
    record = BisectRecord.model_validate(_old("bisect-v9.json"))
    ran = record.execution
    assert record.schema_version == 9 and record.culprits == [["c"]]
    assert (ran.status, ran.runs_used, ran.runs_reused, ran.runs_rate_limited) == (
        "complete",
        12,
        0,
        0,
    )
    assert ran.spend is not None and ran.spend.runs_with_cost == 0
    assert ran.timings is None and ran.budget is None  # a search did not record them


def test_an_old_blame_line_keeps_its_runs_used_and_an_error_line_has_none() -> None:
    blamed = BlameLine.model_validate(
        {"call": "c1", "verdict": "confirmed", "reason": "culprits-found", "runs_used": 14}
    )
    assert blamed.execution is not None and blamed.execution.runs_used == 14
    refused = BlameLine.model_validate(
        {"call": "c2", "verdict": None, "reason": None, "error": "refused", "runs_used": 0}
    )
    assert refused.execution is None
