"""Records written before the judge's own doubt codes and summary fields still load."""

from __future__ import annotations

from counterfact.records.parts import DoubtRecord
from counterfact.records.summary import JudgeRecord

V8_JUDGE = {
    "model": "judge-model",
    "identity": "judge@sha256:0123456789abcdef",
    "judgments": 2,
    "calls": 2,
    "read_back": 0,
    "not_verdicts": 1,
    "recheck": 0.1,
    "rechecked": 0,
    "disagreed": 0,
    "disagreement": None,
    "low": None,
    "high": None,
}
"""A summary.json (schema 8) ``judges[]`` entry, as the first landing wrote it."""


def test_a_schema_8_judge_entry_loads_with_no_unavailable_calls_or_rate_limits() -> None:
    judge = JudgeRecord.model_validate(V8_JUDGE)
    assert (judge.unavailable, judge.rate_limited, judge.concurrency) == (0, 0, None)


def test_an_unparseable_reply_recorded_as_comparison_timed_out_still_loads() -> None:
    old = {"code": "comparison-timed-out", "count": 1, "seeds": [0], "detail": "not a verdict"}
    assert DoubtRecord.model_validate(old).code == "comparison-timed-out"
    for code in ("judge-unparseable", "judge-unavailable"):
        assert DoubtRecord.model_validate(old | {"code": code}).code == code
