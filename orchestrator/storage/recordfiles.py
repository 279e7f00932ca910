"""Reading a run directory's written records back, with the engine's policy over the one reader
of each file (:mod:`counterfact.records.files`): a missing file is "none yet" (None, no rows,
no runs), and a damaged one a :class:`~counterfact.exceptions.RunDirectoryError` naming the file
(and line), never a traceback. For the report, the exports, ``plan`` and the gate.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from counterfact.exceptions import RunDirectoryError
from counterfact.records.bisect import BisectRecord
from counterfact.records.blame import BlameRecord
from counterfact.records.files import RecordFileError, RunLog, read_lines, read_record
from counterfact.records.paths import BISECT_FILE, RUNS_FILE, SUMMARY_FILE, RunPaths
from counterfact.records.runlines import RunBrief
from counterfact.records.runs import RunRecord
from counterfact.records.summary import SweepSummary
from counterfact.records.verdicts import VerdictRecord

RESUME_ADVICE = (
    "inspect it, or pass --fresh to start anew (the old directory is moved aside, not deleted)"
)
"""What the error for a damaged ``runs.jsonl`` line suggests by default."""


class RunLogReader(RunLog):
    """:class:`~counterfact.records.files.RunLog` for the engine: a missing file holds no runs,
    and a damaged line is a :class:`~counterfact.exceptions.RunDirectoryError` (with resume
    advice unless ``advice`` says otherwise).
    """

    def __init__(self, path: Path, advice: str | None = None) -> None:
        super().__init__(path, advice or RESUME_ADVICE)

    def _error(self, msg: str) -> Exception:
        return RunDirectoryError(msg, run_dir=self.path.parent)

    def __iter__(self) -> Iterator[RunRecord]:
        """Yield each record in file order (nothing when there is no file).

        Raises:
            RunDirectoryError: a line other than the last is not a run record.
        """
        if self.path.exists():
            yield from super().__iter__()

    def briefs(self) -> Iterator[RunBrief]:
        """Yield each record's brief (what the report reads), in file order (nothing when there
        is no file).

        Raises:
            RunDirectoryError: a line other than the last is not a run record.
        """
        if self.path.exists():
            yield from super().briefs()


def require_records(run_dir: Path) -> None:
    """Refuse a folder that holds no records at all."""
    if not run_dir.is_dir():
        msg = f"{str(run_dir)!r} is not a directory; give a run directory (e.g. runs/<name>)"
        raise RunDirectoryError(msg, run_dir=run_dir)
    paths = RunPaths(run_dir)
    if not any(p.is_file() for p in (paths.summary, paths.bisect, paths.runs)):
        msg = (
            f"{str(run_dir)!r} holds no records (no {SUMMARY_FILE}, {BISECT_FILE} or "
            f"{RUNS_FILE}); point at a directory written by 'counterfact run' or 'bisect'"
        )
        raise RunDirectoryError(msg, run_dir=run_dir)


_R = TypeVar("_R", bound=BaseModel)


REBUILD_ADVICE = (
    "it is derived from runs.jsonl: run the command that wrote it again on this directory "
    "(a resume: no recorded run reruns) to rebuild it"
)


def _damaged(exc: RecordFileError) -> RunDirectoryError:
    advice = "" if exc.path.name == RUNS_FILE else f"; {REBUILD_ADVICE}"
    return RunDirectoryError(f"{exc}{advice}", run_dir=exc.path.parent)


def _optional(path: Path, model: type[_R]) -> _R | None:
    """The record in ``path``, or None when there is no such file."""
    try:
        return read_record(path, model) if path.is_file() else None
    except RecordFileError as exc:
        raise _damaged(exc) from exc.__cause__


def summary_of(run_dir: Path) -> SweepSummary | None:
    """``summary.json``, or None when there is none (a bisection)."""
    return _optional(RunPaths(run_dir).summary, SweepSummary)


def bisect_of(run_dir: Path) -> BisectRecord | None:
    """``bisect.json``, or None when there is none (a sweep)."""
    return _optional(RunPaths(run_dir).bisect, BisectRecord)


def blame_of(run_dir: Path) -> BlameRecord | None:
    """``blame.json``, or None when the directory is not a blamed call's."""
    return _optional(RunPaths(run_dir).blame, BlameRecord)


def verdicts_of(run_dir: Path) -> list[VerdictRecord]:
    """Every line of ``verdicts.jsonl`` (empty when the file is missing: an interrupted sweep)."""
    path = RunPaths(run_dir).verdicts
    try:
        return read_lines(path, VerdictRecord, "verdict record") if path.is_file() else []
    except RecordFileError as exc:
        raise _damaged(exc) from exc.__cause__


def runs_of(run_dir: Path) -> Iterator[RunRecord]:
    """The run records of ``runs.jsonl``, streamed."""
    yield from RunLogReader(RunPaths(run_dir).runs, advice="inspect or repair that line")


def briefs_of(run_dir: Path) -> Iterator[RunBrief]:
    """What the report reads of each record of ``runs.jsonl``, streamed: a line :func:`runs_of`
    refuses is refused here too, and no record is built.
    """
    yield from RunLogReader(RunPaths(run_dir).runs, advice="inspect or repair that line").briefs()
