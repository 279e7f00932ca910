"""The run store: ``runs.jsonl`` appended and flushed per run; verdicts and summary written whole.

A run directory that already holds run records is refused, never overwritten.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from counterfact.exceptions import RunDirectoryError
from counterfact.probes.records import RunRecord
from counterfact.verdicts.records import SweepSummary, VerdictRecord

RUNS_FILE = "runs.jsonl"
VERDICTS_FILE = "verdicts.jsonl"
SUMMARY_FILE = "summary.json"


def check_run_dir(run_dir: Path) -> None:
    """Refuse a directory that already holds records (before anything is created or run)."""
    runs = run_dir / RUNS_FILE
    if runs.exists() and runs.stat().st_size > 0:
        msg = (
            f"run directory {str(run_dir)!r} already holds records ({RUNS_FILE}); counterfact "
            "never overwrites them — pass --out NEW_DIR or change 'name'"
        )
        raise RunDirectoryError(msg)
    if run_dir.exists() and not run_dir.is_dir():
        msg = f"run directory {str(run_dir)!r} exists and is not a directory; pass --out NEW_DIR"
        raise RunDirectoryError(msg)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, sync it, and rename it into place."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class RunStore:
    """Where one sweep's records go. With no directory, records are kept in memory only."""

    def __init__(self, run_dir: Path | None) -> None:
        self.run_dir = run_dir
        self.records: list[RunRecord] = []
        self._fh: IO[str] | None = None

    def open(self) -> None:
        """Create the directory and open ``runs.jsonl`` for appending."""
        if self.run_dir is None:
            return
        check_run_dir(self.run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._fh = (self.run_dir / RUNS_FILE).open("a", encoding="utf-8")

    def append(self, record: RunRecord) -> None:
        """Keep the record and, with a directory, append its line and flush it."""
        self.records.append(record)
        if self._fh is not None:
            self._fh.write(record.model_dump_json() + "\n")
            self._fh.flush()

    def close(self) -> None:
        """Sync and close ``runs.jsonl``."""
        if self._fh is not None:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
            self._fh = None

    def write_verdicts(self, verdicts: Iterable[VerdictRecord]) -> None:
        if self.run_dir is None:
            return
        text = "".join(v.model_dump_json() + "\n" for v in verdicts)
        write_atomic(self.run_dir / VERDICTS_FILE, text)

    def write_summary(self, summary: SweepSummary) -> None:
        if self.run_dir is None:
            return
        data: dict[str, Any] = summary.model_dump(mode="json", by_alias=True)
        write_atomic(self.run_dir / SUMMARY_FILE, json.dumps(data, indent=2, default=str) + "\n")
