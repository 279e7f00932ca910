"""Scenario files read with depth limits and without silent coercions (issue 27 item 8): a
5,000-deep file was a RecursionError traceback; YAML 1.1 turned ``on`` into true and ``010`` into
8; a Parquet reference NaN became the text 'nan'.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from counterfact.exceptions import ConfigError
from counterfact.orchestrator.config.loading import load_sweep

from ...conftest import TESTS

SWEEP = f"""
name: s
runner: {TESTS / "runners.py"}:echo_arm
executor: {{kind: local}}
arms: [{{id: base}}, {{id: alt, facets: {{answer: 'no'}}}}]
scenarios: {{file: FILE}}
"""


def refused(tmp_path: Path, name: str, body: str | bytes) -> str:
    path = tmp_path / name
    if isinstance(body, bytes):
        path.write_bytes(body)
    else:
        path.write_text(body)
    (tmp_path / "sweep.yaml").write_text(SWEEP.replace("FILE", name))
    with pytest.raises(ConfigError) as info:
        load_sweep(tmp_path / "sweep.yaml")
    text = str(info.value)
    assert "\n" not in text
    return text


def test_a_5000_deep_jsonl_line_is_one_error(tmp_path: Path) -> None:
    deep = '{"id": "a", "inputs": {"x": ' + "[" * 5000 + "]" * 5000 + "}}\n"
    assert "line 1: nests deeper than 64 levels" in refused(tmp_path, "set.jsonl", deep)


def test_a_70_deep_jsonl_line_is_refused_before_it_reaches_a_record(tmp_path: Path) -> None:
    deep = {"id": "a", "inputs": {"x": json.loads("[" * 70 + "]" * 70)}}
    assert "nests deeper than 64 levels" in refused(tmp_path, "set.jsonl", json.dumps(deep))


def test_a_5000_deep_yaml_item_is_one_error(tmp_path: Path) -> None:
    deep = "- {id: a, inputs: {x: " + "[" * 5000 + "]" * 5000 + "}}\n"
    assert "nests deeper than 64 levels" in refused(tmp_path, "set.yaml", deep)


@pytest.mark.parametrize("word", ["on", "yes", "No", "off"])
def test_a_yaml_1_1_boolean_word_is_refused_not_turned_into_a_bool(
    tmp_path: Path, word: str
) -> None:
    text = refused(tmp_path, "set.yaml", f"- {{id: a, inputs: {{flag: {word}}}}}\n")
    assert f"{word!r}" in text and "quote it" in text and "line 1" in text


def test_true_and_false_are_still_booleans(tmp_path: Path) -> None:
    (tmp_path / "set.yaml").write_text("- {id: a, inputs: {flag: true, n: 10}}\n")
    (tmp_path / "sweep.yaml").write_text(SWEEP.replace("FILE", "set.yaml"))
    sweep = load_sweep(tmp_path / "sweep.yaml")
    assert sweep.scenarios[0].inputs == {"flag": True, "n": 10}


@pytest.mark.parametrize("number", ["010", "0x1F", "1:30", "1_000"])
def test_a_yaml_number_not_written_in_decimal_is_refused(tmp_path: Path, number: str) -> None:
    text = refused(tmp_path, "set.yaml", f"- {{id: {number}, inputs: {{}}}}\n")
    assert "quote it" in text


def test_a_reference_given_as_a_number_says_to_write_text(tmp_path: Path) -> None:
    text = refused(tmp_path, "set.jsonl", '{"id": "a", "reference": 42}\n')
    assert "reference: 42 is a number; write the reference as text" in text


def test_a_parquet_reference_that_is_nan_or_a_bool_is_refused(tmp_path: Path) -> None:
    table = pa.table({"id": ["a", "b"], "reference": [float("nan"), 1.5]})
    pq.write_table(table, tmp_path / "set.parquet")
    (tmp_path / "sweep.yaml").write_text(SWEEP.replace("FILE", "set.parquet"))
    with pytest.raises(ConfigError, match=r"row 1: reference: nan is not an answer"):
        load_sweep(tmp_path / "sweep.yaml")
    pq.write_table(pa.table({"id": ["a"], "reference": [True]}), tmp_path / "set.parquet")
    with pytest.raises(ConfigError, match=r"row 1: reference: True is a boolean"):
        load_sweep(tmp_path / "sweep.yaml")
