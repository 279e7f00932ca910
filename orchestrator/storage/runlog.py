"""``runs.jsonl``: one run record per line; reading it back tolerates a torn last line."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from counterfact.exceptions import RunDirectoryError
from counterfact.records.runs import RunRecord

RUNS_FILE = "runs.jsonl"


@dataclass(frozen=True)
class Existing:
    """What a run log already holds."""

    records: tuple[RunRecord, ...]
    torn: bool
    """The last line was cut off by a crash (it is dropped)."""
    good_bytes: int
    """Length of the file up to the last complete line."""


class RunLogReader:
    """Streams the records of ``runs.jsonl`` one line at a time (memory: one line).

    After iterating, :attr:`torn` says whether the last line was cut off by a crash (it is not
    yielded) and :attr:`good_bytes` is the file's length up to the last complete line.
    """

    def __init__(self, path: Path, advice: str | None = None) -> None:
        self.advice = advice
        """What the error for a damaged line suggests (default: resume advice)."""
        self.path = path
        self.torn = False
        self.good_bytes = 0
        self.line = 0
        """The line number of the record last yielded."""

    def __iter__(self) -> Iterator[RunRecord]:
        """Yield each record in file order.

        Raises:
            RunDirectoryError: a line other than the last is not a run record.
        """
        if not self.path.exists():
            return
        with self.path.open("rb") as fh:
            for number, line in enumerate(fh, 1):
                record = self._parse(line, number)
                if record is not None:
                    self.line = number
                    yield record

    def _parse(self, line: bytes, number: int) -> RunRecord | None:
        complete = line.endswith(b"\n")
        if not line.strip():
            self.good_bytes += len(line) if complete else 0
            return None
        try:
            record = RunRecord.model_validate_json(line)
        except ValidationError as exc:
            # Torn: only the final piece, written without its newline. A bad line that ends in
            # a newline was written whole, so it is corruption, wherever it stands.
            if not complete:
                self.torn = True
                return None
            advice = self.advice or (
                "inspect it, or pass --fresh to start anew (the old directory is moved aside, "
                "not deleted)"
            )
            msg = (
                f"{self.path} line {number} is not a run record ({exc.errors()[0]['msg']}); the "
                f"file is corrupt beyond a torn last line — {advice}"
            )
            raise RunDirectoryError(msg, run_dir=self.path.parent) from exc
        self.good_bytes += len(line)  # a complete record without its newline is kept too
        return record


def read_runs(path: Path) -> Existing:
    """Read all of ``runs.jsonl`` into memory (small files, tests, tools); see
    :class:`RunLogReader` for the streaming form the drivers use.

    Raises:
        RunDirectoryError: a line other than the last is not a run record.
    """
    reader = RunLogReader(path)
    records = tuple(reader)
    return Existing(records, reader.torn, reader.good_bytes)
