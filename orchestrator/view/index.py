"""Byte-offset indexes of ``runs.jsonl`` and ``verdicts.jsonl``, built once per file.

A page never reads either file whole: the first request scans it once, keeping for each line
its offset and the few fields lists need (arm, question, seed, verdict ...); later requests
read only the lines they show, by offset. ``runs.jsonl`` grows while a sweep runs: a refresh
reads only the bytes appended since (complete lines only: a line being written is left for
the next refresh); a file replaced (``--fresh``, a new verdicts file) or shortened is indexed
anew. A line that is not a record is counted as damaged and skipped: not JSON, not UTF-8,
nested too deep, a seed that is not a finite integer, or longer than :data:`LINE_LIMIT` (read
past, never held whole). A refresh may stop after ``budget_s`` seconds, between lines; the
next one goes on from there (:attr:`LineIndex.complete` says whether it reached the end).
"""

from __future__ import annotations

import json
import math
import threading
import time
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from counterfact.orchestrator.view.files import Unreadable, identity, open_regular
from counterfact.records.runs import RunRecord
from counterfact.records.verdicts import VerdictRecord

CHUNK = 1 << 20
"""Bytes read at a time while indexing."""
LINE_LIMIT = 64 << 20
"""A longer line is counted as damaged (and read past in chunks, never held whole)."""
DAMAGED = (ValueError, KeyError, TypeError, ArithmeticError, RecursionError)
"""What parsing or reading a hostile line may raise: ``int(Infinity)`` is an OverflowError,
``[[[[...`` a RecursionError, invalid UTF-8 a ValueError."""


def count(value: Any) -> int | float:
    """A count from a record: an int, or the float as it is when it has no int value
    (``Infinity``, ``NaN``: shown as ``inf``, ``nan``).

    Raises:
        TypeError, ValueError: not a number.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return value
    return int(value)


class LineIndex:
    """Offsets of a JSONL file's complete lines; subclasses keep what they need of each."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.damaged = 0
        """Lines that were not JSON objects of the expected shape."""
        self.lines_indexed = 0
        """Lines parsed since the file was first indexed (a page read adds none)."""
        self.held = 0
        """Lines the index holds an entry for now (0 again when the file is indexed anew)."""
        self._lock = threading.Lock()
        self._file: tuple[int, int] | None = None
        self._done = 0
        self._size = 0
        self._at_end = True

    @property
    def complete(self) -> bool:
        """The last refresh read to the end of the file (as it was then)."""
        return self._at_end

    def progress(self) -> str:
        """``runs.jsonl: 12% read (120,000 lines) so far`` while incomplete, else ``""``."""
        if self.complete:
            return ""
        share = self._done / max(1, self._size)
        return f"{self.path.name}: {share:.0%} read ({self.lines_indexed:,} lines) so far"

    def refresh(self, budget_s: float | None = None) -> None:
        """Index what was appended since the last refresh (everything, the first time), or
        what ``budget_s`` seconds allow (the next refresh goes on from there).

        Raises:
            Unreadable: the file is not a regular file, or cannot be opened.
        """
        with self._lock:
            found = identity(self.path)
            if found is None:
                if self._file is not None:
                    self._restart(None)
                self._size = 0
                return
            if not self.path.is_file() or self.path.is_symlink():  # a FIFO has no size
                handle = open_regular(self.path)  # raises Unreadable, saying what it is
                if handle is not None:
                    handle.close()
            file, size = found[:2], found[2]
            if file != self._file or size < self._done:
                self._restart(file)
            self._size = size
            if size > self._done:
                deadline = None if budget_s is None else time.monotonic() + budget_s
                self._scan(deadline)
            else:
                self._at_end = True

    def _restart(self, file: tuple[int, int] | None) -> None:
        self._file = file
        self._done = 0
        self.damaged = 0
        self.held = 0
        self._at_end = True
        self._reset()

    def _scan(self, deadline: float | None) -> None:
        handle = open_regular(self.path)
        if handle is None:
            return
        with handle:
            handle.seek(self._done)
            pending: list[bytes] = []  # the start of a line longer than a chunk
            held = 0  # its length; past LINE_LIMIT its bytes are dropped, not held
            offset = self._done
            self._at_end = False
            while chunk := handle.read(CHUNK):
                if b"\n" not in chunk:
                    held += len(chunk)
                    pending = [] if held > LINE_LIMIT else [*pending, chunk]
                    continue
                lines = chunk.split(b"\n")
                rest = lines.pop()  # no newline yet: being written, or torn
                self._line(offset, b"".join([*pending, lines[0]]), held + len(lines[0]))
                offset += held + len(lines[0]) + 1
                for line in lines[1:]:
                    self._line(offset, line, len(line))
                    offset += len(line) + 1
                pending, held = [rest], len(rest)
                if deadline is not None and time.monotonic() > deadline:
                    break
            else:
                self._at_end = True
            self._done = offset

    def _line(self, offset: int, line: bytes, length: int) -> None:
        if length <= LINE_LIMIT and not line.strip():
            return
        self.lines_indexed += 1
        if length > LINE_LIMIT:
            self.damaged += 1
            return
        try:
            data = json.loads(line)
            self._add(offset, data)
        except DAMAGED:
            self.damaged += 1
        else:
            self.held += 1

    def read_line(self, offset: int) -> bytes:
        """The line at ``offset`` (as indexed; at most :data:`LINE_LIMIT` bytes of it)."""
        handle = open_regular(self.path)
        if handle is None:
            return b""
        with handle:
            handle.seek(offset)
            return handle.readline(LINE_LIMIT + 1)

    def _reset(self) -> None:
        raise NotImplementedError

    def _add(self, offset: int, data: Any) -> None:
        raise NotImplementedError


@dataclass
class ArmCount:
    """Runs of one arm recorded so far."""

    runs: int = 0
    failed: int = 0


_ABSENT = -1
"""A seed with no line in a cell's array."""
SPARSE_GAP = 1024
"""A seed more than this beyond its cell's array turns the cell into a dict."""
RUN_BYTES = 8
"""Memory one run holds in :class:`RunsIndex`: an 8-byte slot of its cell's array."""
CELL_BYTES = 160
"""Memory one (arm, question) holds in :class:`RunsIndex` besides its runs' slots: the array
and its dict entry (tracemalloc, 10,000 questions x 4 arms x 5 seeds: 7 MiB for 200,000
runs; ``scripts/bench_view.py`` reports it)."""


def _get(cell: array[int] | dict[int, int], seed: int) -> int | None:
    """The packed entry of ``seed`` in ``cell``, or None."""
    if isinstance(cell, dict):
        return cell.get(seed)
    packed = cell[seed] if 0 <= seed < len(cell) else _ABSENT
    return None if packed == _ABSENT else packed


def _items(cell: array[int] | dict[int, int]) -> list[tuple[int, int]]:
    """(seed, packed) of every run of ``cell``, by seed."""
    if isinstance(cell, dict):
        return sorted(cell.items())
    return [(s, p) for s, p in enumerate(cell) if p != _ABSENT]


class RunsIndex(LineIndex):
    """``runs.jsonl`` by (arm, question): each seed's line offset and whether it succeeded.

    Seeds are numbered from 0 up, so each (arm, question)'s runs are an ``array('q')`` indexed
    by seed (8 bytes a run, where a dict of them held ~60: 200,000 runs of an eval set hold
    7 MiB, not 21.6); a seed far past the others (:data:`SPARSE_GAP`) or negative turns its cell
    into a dict.
    """

    def _reset(self) -> None:
        self.cells: dict[str, dict[str, array[int] | dict[int, int]]] = {}
        """arm → question → seed's line offset times 2, plus 1 when it succeeded (an array
        indexed by seed, -1 where none; or a dict by seed). Arms and each arm's questions in
        first-seen order."""
        self.arms: dict[str, ArmCount] = {}
        """Every arm seen, in first-seen order, with its counts."""
        self._names: dict[str, str] = {}
        """One string per question id, shared by every arm's entries."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._reset()

    @property
    def questions(self) -> dict[str, dict[str, array[int] | dict[int, int]]]:
        """Per arm, its questions in first-seen order (the keys)."""
        return self.cells

    def footprint(self) -> int:
        """Bytes the index holds, about (:data:`RUN_BYTES` a run, :data:`CELL_BYTES` a cell)."""
        return self.held * RUN_BYTES + sum(map(len, self.cells.values())) * CELL_BYTES

    def _add(self, offset: int, data: Any) -> None:
        scenario, arm, seed = str(data["scenario"]), str(data["arm"]), data["seed"]
        if not isinstance(seed, int) or isinstance(seed, bool):
            seed = int(seed)  # 3.0 is seed 3; Infinity, NaN or "x" is a damaged line
        scenario = self._names.setdefault(scenario, scenario)
        ok = data.get("error") is None and data.get("output") is not None
        count = self.arms.setdefault(arm, ArmCount())
        replaced = self._put(self.cells.setdefault(arm, {}), scenario, seed, offset << 1 | ok)
        if replaced is not None:  # a later line for the same run replaces the earlier
            count.runs -= 1
            count.failed -= not replaced & 1
        count.runs += 1
        count.failed += not ok

    @staticmethod
    def _put(
        cells: dict[str, array[int] | dict[int, int]], scenario: str, seed: int, packed: int
    ) -> int | None:
        """Set ``seed``'s entry in ``scenario``'s cell; the entry it replaced, or None."""
        cell = cells.get(scenario)
        if cell is None:
            cell = cells[scenario] = array("q")
        if isinstance(cell, array):
            if 0 <= seed < len(cell) + SPARSE_GAP:
                if seed >= len(cell):
                    cell.extend([_ABSENT] * (seed + 1 - len(cell)))
                old = cell[seed]
                cell[seed] = packed
                return None if old == _ABSENT else old
            cell = cells[scenario] = dict(_items(cell))  # a seed far out: a dict from now on
        replaced = cell.get(seed)
        cell[seed] = packed
        return replaced

    def seeds(self, arm: str, scenario: str) -> dict[int, tuple[int, bool]]:
        """Seed → (offset, succeeded) of one (arm, question)."""
        found = self.cells.get(arm, {}).get(scenario)
        items = [] if found is None else _items(found)
        return {seed: (packed >> 1, bool(packed & 1)) for seed, packed in items}

    def run(self, arm: str, scenario: str, seed: int) -> tuple[int, bool] | None:
        """(offset, succeeded) of one run, or None when none is indexed."""
        found = self.cells.get(arm, {}).get(scenario)
        packed = None if found is None else _get(found, seed)
        return None if packed is None else (packed >> 1, bool(packed & 1))

    def record(self, offset: int) -> RunRecord:
        """The run record at ``offset``."""
        return RunRecord.model_validate_json(self.read_line(offset))


@dataclass(frozen=True, slots=True)
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
    flips: int | float | None
    """A count; a float only when the record holds Infinity or NaN (shown as ``inf``)."""
    samples: int | float
    samples_declared: int | float


def _word(words: dict[str, str], data: Any, key: str, default: str | None = None) -> str | None:
    """A field of a small vocabulary (arm, verdict, reason ...) as the one string ``words`` holds
    for its value: 40,000 rows hold a handful of distinct words, not 40,000 copies of each.
    """
    value = data.get(key, default)
    if value is None:
        return None
    text = str(value)
    return words.setdefault(text, text)


def _row(offset: int, data: Any, words: dict[str, str]) -> Row:
    flips = data.get("flips")
    return Row(
        offset=offset,
        scenario=str(data["scenario"]),
        arm=words.setdefault(arm := str(data["arm"]), arm),
        is_baseline=bool(data["is_baseline"]),
        verdict=_word(words, data, "verdict"),
        reason=_word(words, data, "reason"),
        standing=str(_word(words, data, "standing", "not-assessed")),
        statistical_verdict=_word(words, data, "statistical_verdict"),
        flips=None if flips is None else count(flips),
        samples=count(data["samples"]),
        samples_declared=count(data["samples_declared"]),
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
        self._words: dict[str, str] = {}

    def _add(self, offset: int, data: Any) -> None:
        row = _row(offset, data, self._words)
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
