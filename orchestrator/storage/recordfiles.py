"""Reading a run directory's written records back: ``summary.json``, ``verdicts.jsonl``,
``bisect.json``, and the failed runs of ``runs.jsonl`` — for the report and the exports.

A folder without records, a file that is not JSON, or a line that is not a record gives a
:class:`~counterfact.exceptions.RunDirectoryError` naming the file (and line), never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from counterfact.exceptions import RunDirectoryError
from counterfact.orchestrator.storage.dirchecks import BISECT_FILE, SUMMARY_FILE, VERDICTS_FILE
from counterfact.orchestrator.storage.runlog import RUNS_FILE, RunLogReader
from counterfact.records.bisect import BisectRecord
from counterfact.records.runs import RunRecord
from counterfact.records.summary import SweepSummary
from counterfact.records.verdicts import VerdictRecord


def require_records(run_dir: Path) -> None:
    """Refuse a folder that holds no records at all."""
    if not run_dir.is_dir():
        msg = f"{str(run_dir)!r} is not a directory; give a run directory (e.g. runs/<name>)"
        raise RunDirectoryError(msg, run_dir=run_dir)
    if not any((run_dir / f).is_file() for f in (SUMMARY_FILE, BISECT_FILE, RUNS_FILE)):
        msg = (
            f"{str(run_dir)!r} holds no records (no {SUMMARY_FILE}, {BISECT_FILE} or "
            f"{RUNS_FILE}); point at a directory written by 'counterfact run' or 'bisect'"
        )
        raise RunDirectoryError(msg, run_dir=run_dir)


def _load(path: Path, model: type[BaseModel]) -> Any:
    try:
        return model.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "(top level)"
        msg = f"{path} is not a valid {model.__name__} record: {where}: {error['msg']}"
        raise RunDirectoryError(msg, run_dir=path.parent) from exc
    except ValueError as exc:
        msg = f"{path} is not a valid {model.__name__} record: {str(exc)[:200]}"
        raise RunDirectoryError(msg, run_dir=path.parent) from exc


def read_summary(run_dir: Path) -> SweepSummary | None:
    """``summary.json``, or None when there is none (a bisection)."""
    path = run_dir / SUMMARY_FILE
    return _load(path, SweepSummary) if path.is_file() else None


def read_bisect(run_dir: Path) -> BisectRecord | None:
    """``bisect.json``, or None when there is none (a sweep)."""
    path = run_dir / BISECT_FILE
    return _load(path, BisectRecord) if path.is_file() else None


def read_verdicts(run_dir: Path) -> list[VerdictRecord]:
    """Every line of ``verdicts.jsonl`` (empty when the file is missing: an interrupted sweep).

    Each line is validated straight from its JSON text (pydantic's parser: a third faster than
    ``json.loads`` then validation, which counts at 10,000 questions); a line that fails is
    parsed again only to say what was wrong with it.
    """
    path = run_dir / VERDICTS_FILE
    if not path.is_file():
        return []
    rows = []
    with path.open("rb") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rows.append(VerdictRecord.model_validate_json(line))
            except ValidationError as exc:
                _parse_line(path, number, line)  # not JSON, or not an object: says so
                first = str(exc).splitlines()[0][:200]
                msg = f"{path} record {len(rows) + 1} is not a verdict record: {first}"
                raise RunDirectoryError(msg, run_dir=path.parent) from exc
    return rows


def _parse_line(path: Path, number: int, line: str | bytes) -> dict[str, Any]:
    """Line ``number`` of ``path`` as a mapping; a line that is not a JSON object names it."""
    try:
        data = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "not UTF-8"
        msg = f"{path} line {number} is not JSON ({reason}); the file is damaged"
        raise RunDirectoryError(msg, run_dir=path.parent) from exc
    if not isinstance(data, dict):
        msg = f"{path} line {number} is not a JSON object; the file is damaged"
        raise RunDirectoryError(msg, run_dir=path.parent)
    return data


def runs(run_dir: Path) -> Iterator[RunRecord]:
    """The run records of ``runs.jsonl``, streamed."""
    yield from RunLogReader(run_dir / RUNS_FILE, advice="inspect or repair that line")
