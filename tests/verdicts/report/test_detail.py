"""The compact per-question detail of a large report: which questions keep a section, and the
inline data's escaping."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from counterfact.records.arms import ArmVerdictRecord, QuestionMoveRecord
from counterfact.verdicts.report.detail import (
    NOTABLE_SECTIONS,
    SECTIONS_UP_TO,
    _inline_json,
    is_compact,
    sectioned,
)


def _rows(questions: int) -> Any:
    return [SimpleNamespace(scenario=f"q{i}") for i in range(questions) for _ in range(2)]


def _arm(*questions: str) -> ArmVerdictRecord:
    moves = [QuestionMoveRecord(question=q, moved=1, pairs=5) for q in questions]
    return ArmVerdictRecord.model_construct(notable=moves)


def test_a_small_sweep_keeps_a_section_per_question() -> None:
    rows = _rows(SECTIONS_UP_TO)
    assert not is_compact(rows)
    assert sectioned(rows, [_arm("q3")]) == [f"q{i}" for i in range(SECTIONS_UP_TO)]


def test_a_large_one_keeps_the_arms_notable_questions_in_turn() -> None:
    rows = _rows(SECTIONS_UP_TO + 1)
    assert is_compact(rows)
    arms = [_arm("q1", "q2", "q3"), _arm("q2", "q9", "gone")]
    assert sectioned(rows, arms) == ["q1", "q2", "q9", "q3"]  # each arm's first, then second
    many = [_arm(*(f"q{i}" for i in range(k, 21, 2))) for k in (0, 1)]
    assert len(sectioned(rows, many)) == NOTABLE_SECTIONS
    assert sectioned(rows, []) == []


def test_the_inline_data_cannot_close_its_script() -> None:
    value = {"q": "</script><script>alert(1)</script> & <!--"}
    text = _inline_json(value)
    assert not set(text) & {"<", ">", "&"}
    assert json.loads(text) == value
