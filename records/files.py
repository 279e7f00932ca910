"""Readers of a run directory's record files, with the standard library and pydantic only.

Each takes a run directory (or the file itself). ``runs.jsonl`` is appended while a sweep runs,
so a torn last line (a crash mid-write) is skipped, as a resume drops it; every other line must
validate.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from counterfact.records.arms import ArmVerdictRecord
from counterfact.records.bisect import BisectRecord
from counterfact.records.live import LIVE_FILE, LiveState
from counterfact.records.runs import RunRecord
from counterfact.records.summary import SweepSummary
from counterfact.records.verdicts import VerdictRecord

RUNS_FILE = "runs.jsonl"
VERDICTS_FILE = "verdicts.jsonl"
SUMMARY_FILE = "summary.json"
BISECT_FILE = "bisect.json"
ARMS_FILE = "arms.jsonl"


def _file(where: str | Path, name: str) -> Path:
    path = Path(where)
    return path / name if path.is_dir() else path


def read_runs(where: str | Path) -> Iterator[RunRecord]:
    """Every run record of ``runs.jsonl``, in file order (a torn last line is skipped)."""
    with _file(where, RUNS_FILE).open("rb") as fh:
        for raw in fh:
            if not raw.endswith(b"\n"):
                return  # torn by a crash: the resume drops it too
            if raw.strip():
                yield RunRecord.model_validate_json(raw)


def read_verdicts(where: str | Path) -> list[VerdictRecord]:
    """Every row of ``verdicts.jsonl``: one per (scenario, arm), baseline first per scenario."""
    text = _file(where, VERDICTS_FILE).read_text(encoding="utf-8")
    return [VerdictRecord.model_validate_json(line) for line in text.splitlines() if line.strip()]


def read_summary(where: str | Path) -> SweepSummary:
    """``summary.json``."""
    return SweepSummary.model_validate(json.loads(_file(where, SUMMARY_FILE).read_text("utf-8")))


def read_bisect(where: str | Path) -> BisectRecord:
    """``bisect.json``."""
    return BisectRecord.model_validate(json.loads(_file(where, BISECT_FILE).read_text("utf-8")))


def read_arms(where: str | Path) -> list[ArmVerdictRecord]:
    """Every line of ``arms.jsonl``: one verdict per challenger over the whole question set."""
    text = _file(where, ARMS_FILE).read_text(encoding="utf-8")
    return [
        ArmVerdictRecord.model_validate_json(line) for line in text.splitlines() if line.strip()
    ]


def read_live(where: str | Path) -> LiveState:
    """``live.json``: the sweep's latest progress snapshot (see :mod:`counterfact.records.live`)."""
    return LiveState.model_validate(json.loads(_file(where, LIVE_FILE).read_text("utf-8")))
