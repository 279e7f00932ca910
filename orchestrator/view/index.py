"""Byte-offset indexes of ``runs.jsonl`` and ``verdicts.jsonl``, built once per file.

A page never reads either file whole: the first request scans it once, keeping for each line
its offset and the few fields lists need (arm, question, seed, verdict ...); later requests
read only the lines they show, by offset. ``runs.jsonl`` grows while a sweep runs: a refresh
reads only the bytes appended since (complete lines only: a line being written is left for
the next refresh); a file replaced (``--fresh``, a new verdicts file) or shortened is indexed
anew. A line that is not a record is counted as damaged and skipped.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from counterfact.orchestrator.view.files import Unreadable, identity, open_regular
from counterfact.records.runs import RunRecord
from counterfact.records.verdicts import VerdictRecord

CHUNK = 1 << 20
"""Bytes read at a time while indexing."""


class LineIndex:
    """Offsets of a JSONL file's complete lines; subclasses keep what they need of each."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.damaged = 0
        """Lines that were not JSON objects of the expected shape."""
        self.lines_indexed = 0
        """Lines parsed since the file was first indexed (a page read adds none)."""
        self._lock = threading.Lock()
        self._file: tuple[int, int] | None = None
        self._done = 0

    def refresh(self) -> None:
        """Index what was appended since the last refresh (everything, the first time)."""
        with self._lock:
            found = identity(self.path)
            if found is None:
                if self._file is not None:
                    self._restart(None)
                return
            file, size = found[:2], found[2]
            if file != self._file or size < self._done:
                self._restart(file)
            if size > self._done:
                self._scan()

    def _restart(self, file: tuple[int, int] | None) -> None:
        self._file = file
        self._done = 0
        self.damaged = 0
        self._reset()

    def _scan(self) -> None:
        handle = open_regular(self.path)
        if handle is None:
            return
        with handle:
            handle.seek(self._done)
            pending: list[bytes] = []  # the start of a line longer than a chunk
            offset = self._done
            while chunk := handle.read(CHUNK):
                if b"\n" not in chunk:
                    pending.append(chunk)
                    continue
                lines = b"".join([*pending, chunk]).split(b"\n")
                pending = [lines.pop()]  # no newline yet: being written, or torn
                for line in lines:
                    self._line(offset, line)
                    offset += len(line) + 1
            self._done = offset

    def _line(self, offset: int, line: bytes) -> None:
        if not line.strip():
            return
        self.lines_indexed += 1
        try:
            data = json.loads(line)
            self._add(offset, data)
        except (ValueError, KeyError, TypeError):
            self.damaged += 1

    def read_line(self, offset: int) -> bytes:
        """The line at ``offset`` (as indexed)."""
        handle = open_regular(self.path)
        if handle is None:
            return b""
        with handle:
            handle.seek(offset)
            return handle.readline()

    def _reset(self) -> None:
        raise NotImplementedError

    def _add(self, offset: int, data: Any) -> None:
        raise NotImplementedError


@dataclass
class ArmCount:
    """Runs of one arm recorded so far."""

    runs: int = 0
    failed: int = 0


class RunsIndex(LineIndex):
    """``runs.jsonl`` by (arm, question): each seed's line offset and whether it succeeded."""

    def _reset(self) -> None:
        self.cells: dict[tuple[str, str], dict[int, tuple[int, bool]]] = {}
        self.arms: dict[str, ArmCount] = {}
        """Every arm seen, in first-seen order, with its counts."""
        self.questions: dict[str, dict[str, None]] = {}
        """Per arm, its questions in first-seen order (an ordered set)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._reset()

    def _add(self, offset: int, data: Any) -> None:
        scenario, arm, seed = str(data["scenario"]), str(data["arm"]), int(data["seed"])
        ok = data.get("error") is None and data.get("output") is not None
        seeds = self.cells.setdefault((arm, scenario), {})
        count = self.arms.setdefault(arm, ArmCount())
        if seed in seeds:  # a later line for the same run replaces the earlier
            count.runs -= 1
            count.failed -= not seeds[seed][1]
        seeds[seed] = (offset, ok)
        count.runs += 1
        count.failed += not ok
        self.questions.setdefault(arm, {})[scenario] = None

    def seeds(self, arm: str, scenario: str) -> dict[int, tuple[int, bool]]:
        """Seed → (offset, succeeded) of one (arm, question)."""
        return self.cells.get((arm, scenario), {})

    def record(self, offset: int) -> RunRecord:
        """The run record at ``offset``."""
        return RunRecord.model_validate_json(self.read_line(offset))


@dataclass(frozen=True)
class Row:
    """What lists show of one ``verdicts.jsonl`` line."""

    offset: int
    scenario: str
    arm: str
    is_baseline: bool
    verdict: str | None
    reason: str | None
    standing: str
    statistical_verdict: str | None
    flips: int | None
    samples: int
    samples_declared: int


def _row(offset: int, data: Any) -> Row:
    flips = data.get("flips")
    return Row(
        offset=offset,
        scenario=str(data["scenario"]),
        arm=str(data["arm"]),
        is_baseline=bool(data["is_baseline"]),
        verdict=None if data.get("verdict") is None else str(data["verdict"]),
        reason=None if data.get("reason") is None else str(data["reason"]),
        standing=str(data.get("standing", "not-assessed")),
        statistical_verdict=(
            None if data.get("statistical_verdict") is None else str(data["statistical_verdict"])
        ),
        flips=None if flips is None else int(flips),
        samples=int(data["samples"]),
        samples_declared=int(data["samples_declared"]),
    )


class VerdictsIndex(LineIndex):
    """``verdicts.jsonl``: each (question, arm) row's offset and headline fields."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._reset()

    def _reset(self) -> None:
        self.rows: dict[tuple[str, str], Row] = {}
        """(question, arm) → its row."""
        self.by_arm: dict[str, list[Row]] = {}
        """Per arm, its rows in file order."""
        self.baseline_of: dict[str, str] = {}
        """Per question, the baseline arm."""

    def _add(self, offset: int, data: Any) -> None:
        row = _row(offset, data)
        self.rows[(row.scenario, row.arm)] = row
        self.by_arm.setdefault(row.arm, []).append(row)
        if row.is_baseline:
            self.baseline_of[row.scenario] = row.arm

    def record(self, row: Row) -> VerdictRecord:
        """The whole verdict record of ``row``.

        Raises:
            Unreadable: its line is not a valid verdict record (the index read only the row's
                headline fields).
        """
        try:
            return VerdictRecord.model_validate_json(self.read_line(row.offset))
        except ValueError as exc:
            first = str(exc).splitlines()[0]
            msg = (
                f"verdicts.jsonl: the row of question {row.scenario!r}, arm {row.arm!r} is not "
                f"a valid verdict record ({first})"
            )
            raise Unreadable(msg) from exc
