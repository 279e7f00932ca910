"""Reading verdicts.jsonl back: a damaged line is named, whatever is wrong with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from counterfact.exceptions import RunDirectoryError
from counterfact.orchestrator.storage.recordfiles import verdicts_of


def _write(tmp_path: Path, *lines: str) -> Path:
    (tmp_path / "verdicts.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def test_a_line_that_is_not_json_names_its_line(tmp_path: Path) -> None:
    with pytest.raises(RunDirectoryError, match=r"line 2 is not JSON \(.*\); the file is damaged"):
        verdicts_of(_write(tmp_path, "", "{not json"))


def test_a_line_that_is_not_an_object_names_its_line(tmp_path: Path) -> None:
    with pytest.raises(RunDirectoryError, match="line 1 is not a JSON object"):
        verdicts_of(_write(tmp_path, "[1, 2]"))


def test_an_object_that_is_not_a_verdict_names_its_record(tmp_path: Path) -> None:
    with pytest.raises(RunDirectoryError, match="record 1 is not a verdict record: "):
        verdicts_of(_write(tmp_path, '{"scenario": "s"}'))


def test_no_file_is_no_rows(tmp_path: Path) -> None:
    assert verdicts_of(tmp_path) == []
