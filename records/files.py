"""The one reader of each of a run directory's record files, with the standard library and
pydantic only.

Each public reader takes a run directory (or the file itself); the engine's storage layer reads
through the same code (:mod:`counterfact.orchestrator.storage.recordfiles` adds its policy: a
missing file is "none yet", a damaged one a ``RunDirectoryError``). ``runs.jsonl`` is appended
while a sweep runs, so a torn last line (a crash mid-write) is skipped, as a resume drops it;
every other line must validate. A file that does not parse raises :class:`RecordFileError`
naming the file (and line); a missing file raises :class:`FileNotFoundError`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from json import JSONDecodeError, loads
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from counterfact.records.arms import ArmVerdictRecord
from counterfact.records.bisect import BisectRecord
from counterfact.records.live import LiveState
from counterfact.records.paths import (
    ARMS_FILE,
    BISECT_FILE,
    LIVE_FILE,
    RUNS_FILE,
    SUMMARY_FILE,
    VERDICTS_FILE,
    locate,
)
from counterfact.records.runlines import RunBrief, brief_of, parse_run
from counterfact.records.runs import RunRecord
from counterfact.records.summary import SweepSummary
from counterfact.records.verdicts import VerdictRecord

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


class RecordFileError(ValueError):
    """A record file that does not parse; the message names the file and, for a line file, the
    line. A :class:`ValueError`, as pydantic's ``ValidationError`` and ``json``'s errors are.
    """

    def __init__(self, msg: str, path: Path) -> None:
        super().__init__(msg)
        self.path = path
        """The damaged file."""


class RunLog:
    """Streams the records of ``runs.jsonl`` one line at a time (memory: one line).

    After iterating, :attr:`torn` says whether the last line was cut off by a crash (it is not
    yielded) and :attr:`good_bytes` is the file's length up to the last complete line. A
    complete record without its newline is kept, as a resume keeps it, unless
    ``drop_unterminated`` (what :func:`read_runs` has always done: any unterminated last line is
    skipped).
    """

    def __init__(
        self, path: Path, advice: str | None = None, *, drop_unterminated: bool = False
    ) -> None:
        self.advice = advice
        """What the error for a damaged line suggests (appended after a dash when given)."""
        self.path = path
        self.drop_unterminated = drop_unterminated
        self.torn = False
        self.good_bytes = 0
        self.line = 0
        """The line number of the record last yielded."""

    def _error(self, msg: str) -> Exception:
        """The exception for a damaged line (a subclass may raise its own kind)."""
        return RecordFileError(msg, self.path)

    def __iter__(self) -> Iterator[RunRecord]:
        """Yield each record in file order.

        Raises:
            RecordFileError: a line other than the last is not a run record (what
                :meth:`_error` returns).
            FileNotFoundError: there is no such file.
        """
        return self._read(parse_run)

    def briefs(self) -> Iterator[RunBrief]:
        """Yield each record's :class:`~counterfact.records.runlines.RunBrief` (what the report
        reads), in file order: a line :meth:`__iter__` refuses is refused here too, and no model
        is built (several times faster).

        Raises:
            RecordFileError: a line other than the last is not a run record.
            FileNotFoundError: there is no such file.
        """
        return self._read(brief_of)

    def _read(self, decode: Callable[[bytes], T]) -> Iterator[T]:
        with self.path.open("rb") as fh:
            for number, line in enumerate(fh, 1):
                record = self._parse(line, number, decode)
                if record is not None:
                    self.line = number
                    yield record

    def _parse(self, line: bytes, number: int, decode: Callable[[bytes], T]) -> T | None:
        complete = line.endswith(b"\n")
        if not complete and self.drop_unterminated:
            self.torn = bool(line.strip())
            return None
        if not line.strip():
            self.good_bytes += len(line) if complete else 0
            return None
        try:
            record = decode(line)
        except ValidationError as exc:
            # Torn: only the final piece, written without its newline. A bad line that ends in
            # a newline was written whole, so it is corruption, wherever it stands.
            if not complete:
                self.torn = True
                return None
            msg = (
                f"{self.path} line {number} is not a run record ({exc.errors()[0]['msg']}); the "
                "file is corrupt beyond a torn last line"
                + (f" — {self.advice}" if self.advice else "")
            )
            raise self._error(msg) from exc
        self.good_bytes += len(line)  # a complete record without its newline is kept too
        return record


def _check_json(path: Path, number: int, line: bytes) -> None:
    """A line that is not a JSON object: say which (the caller then says what else is wrong)."""
    try:
        data = loads(line)
    except (JSONDecodeError, UnicodeDecodeError) as exc:
        reason = exc.msg if isinstance(exc, JSONDecodeError) else "not UTF-8"
        msg = f"{path} line {number} is not JSON ({reason}); the file is damaged"
        raise RecordFileError(msg, path) from exc
    if not isinstance(data, dict):
        msg = f"{path} line {number} is not a JSON object; the file is damaged"
        raise RecordFileError(msg, path)


def read_lines(path: Path, model: type[M], what: str) -> list[M]:
    """Every line of a JSON-lines record file, validated as ``model`` (``what`` names it in
    errors: ``verdict record``).

    Each line is validated straight from its JSON text (pydantic's parser: a third faster than
    ``json.loads`` then validation, which counts at 10,000 questions); a line that fails is
    parsed again only to say what was wrong with it.

    Raises:
        RecordFileError: a line is not JSON, not an object, or not a ``model``.
        FileNotFoundError: there is no such file.
    """
    with path.open("rb") as fh:
        return _checked(path, fh, model, what)


def _checked(path: Path, lines: Iterable[bytes], model: type[M], what: str) -> list[M]:
    rows: list[M] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rows.append(model.model_validate_json(line))
        except ValidationError as exc:
            _check_json(path, number, line)  # not JSON, or not an object: says so
            msg = f"{path} record {len(rows) + 1} is not a {what}: {_first_problem(exc)}"
            raise RecordFileError(msg, path) from exc
    return rows


def _first_problem(exc: ValidationError) -> str:
    """``cost.tokens.median: Input should be a valid number (got None)``: the field and what was
    wrong with it, which ``str(exc)``'s first line (``1 validation error for ...``) does not say.
    """
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"]) or "(top level)"
    given = error.get("input")
    got = repr(given[:60] if isinstance(given, str | bytes) else given)[:60]
    return f"{where}: {error['msg']} (got {got})"


def read_record(path: Path, model: type[M]) -> M:
    """A JSON record file (``summary.json``, ``bisect.json``, ``live.json``) as ``model``.

    Raises:
        RecordFileError: the file is not JSON or not a ``model`` (the first problem named).
        FileNotFoundError: there is no such file.
    """
    data = path.read_bytes()
    try:
        return model.model_validate_json(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "(top level)"
        msg = f"{path} is not a valid {model.__name__} record: {where}: {error['msg']}"
        raise RecordFileError(msg, path) from exc
    except ValueError as exc:
        msg = f"{path} is not a valid {model.__name__} record: {str(exc)[:200]}"
        raise RecordFileError(msg, path) from exc


def read_runs(where: str | Path) -> Iterator[RunRecord]:
    """Every run record of ``runs.jsonl``, in file order (an unterminated last line is skipped:
    it may be a run still being written).
    """
    yield from RunLog(locate(where, RUNS_FILE), drop_unterminated=True)


def read_verdicts(where: str | Path) -> list[VerdictRecord]:
    """Every row of ``verdicts.jsonl``: one per (scenario, arm), baseline first per scenario."""
    return read_lines(locate(where, VERDICTS_FILE), VerdictRecord, "verdict record")


def read_summary(where: str | Path) -> SweepSummary:
    """``summary.json``."""
    return read_record(locate(where, SUMMARY_FILE), SweepSummary)


def read_bisect(where: str | Path) -> BisectRecord:
    """``bisect.json``."""
    return read_record(locate(where, BISECT_FILE), BisectRecord)


def read_arms(where: str | Path) -> list[ArmVerdictRecord]:
    """Every line of ``arms.jsonl``: one verdict per challenger over the whole question set."""
    return read_lines(locate(where, ARMS_FILE), ArmVerdictRecord, "arm verdict record")


def parse_arms(data: bytes) -> list[ArmVerdictRecord]:
    """``arms.jsonl``'s bytes as records, for a reader that bounds its own reads (the viewer);
    a bad line raises pydantic's ``ValidationError``.
    """
    return [ArmVerdictRecord.model_validate_json(x) for x in data.splitlines() if x.strip()]


def read_live(where: str | Path) -> LiveState:
    """``live.json``: the sweep's latest progress snapshot (see :mod:`counterfact.records.live`)."""
    return read_record(locate(where, LIVE_FILE), LiveState)
