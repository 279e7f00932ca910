"""The names of a run directory's files, in one place (submitit's ``JobPaths``): every reader,
writer and check of a run directory takes them from here, by constant or through
:class:`RunPaths`.

Standard library only, like the rest of :mod:`counterfact.records`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

RUNS_FILE = "runs.jsonl"
"""One :class:`~counterfact.records.runs.RunRecord` per line, appended while a sweep runs."""
VERDICTS_FILE = "verdicts.jsonl"
"""One :class:`~counterfact.records.verdicts.VerdictRecord` per (scenario, arm)."""
ARMS_FILE = "arms.jsonl"
"""One :class:`~counterfact.records.arms.ArmVerdictRecord` per challenger (eval sets)."""
SUMMARY_FILE = "summary.json"
"""The sweep's :class:`~counterfact.records.summary.SweepSummary`."""
BISECT_FILE = "bisect.json"
BLAME_FILE = "blame.json"
BLAME_LINES_FILE = "blame.jsonl"
"""``counterfact blame`` over many calls: a line per call (each call's records under
``calls/<call>/``)."""
"""A bisection's :class:`~counterfact.records.bisect.BisectRecord`."""
FINGERPRINT_FILE = "sweep.json"
"""What a resume must match: the sweep's fingerprint and its runs' identity."""
REPORT_FILE = "report.html"
"""The self-contained report page."""
LIVE_FILE = "live.json"
"""The sweep's latest :class:`~counterfact.records.live.LiveState`, rewritten while it runs."""
LOCK_FILE = ".lock"
"""Held by the one process writing into the directory."""

RECORD_FILES = (RUNS_FILE, FINGERPRINT_FILE, SUMMARY_FILE, BISECT_FILE, VERDICTS_FILE, ARMS_FILE)
"""A folder holding one of these was written by counterfact (``--fresh`` and resume ask; the
order is the one error messages list)."""
PREVIOUS = {
    VERDICTS_FILE: "verdicts.previous.jsonl",
    ARMS_FILE: "arms.previous.jsonl",
    REPORT_FILE: "report.previous.html",
}
"""Where a resume moves the last verdicts and report, so that a resume stopped before it judged
never leaves them presented as current (the new ones are written when it finishes)."""
VIEWED = frozenset({SUMMARY_FILE, RUNS_FILE, LIVE_FILE, BISECT_FILE, VERDICTS_FILE, ARMS_FILE})
"""What makes a folder a run directory for ``counterfact view``. Unlike :data:`RECORD_FILES`,
``live.json`` counts (a sweep that has just started) and ``sweep.json`` does not."""


def locate(where: str | Path, name: str) -> Path:
    """``where`` itself when it is not a directory, else the file ``name`` inside it (what
    every reader accepts: a run directory or the file).
    """
    path = Path(where)
    return path / name if path.is_dir() else path


@dataclass(frozen=True)
class RunPaths:
    """A run directory's files by role: ``RunPaths(run_dir).runs``, ``.verdicts`` ..."""

    path: Path
    """The run directory."""

    @property
    def runs(self) -> Path:
        """``runs.jsonl``."""
        return self.path / RUNS_FILE

    @property
    def verdicts(self) -> Path:
        """``verdicts.jsonl``."""
        return self.path / VERDICTS_FILE

    @property
    def arms(self) -> Path:
        """``arms.jsonl``."""
        return self.path / ARMS_FILE

    @property
    def summary(self) -> Path:
        """``summary.json``."""
        return self.path / SUMMARY_FILE

    @property
    def bisect(self) -> Path:
        """``bisect.json``."""
        return self.path / BISECT_FILE

    @property
    def blame(self) -> Path:
        """``blame.json`` (``counterfact blame``: the call and its parts beside the search)."""
        return self.path / BLAME_FILE

    @property
    def fingerprint(self) -> Path:
        """``sweep.json``."""
        return self.path / FINGERPRINT_FILE

    @property
    def report(self) -> Path:
        """``report.html``."""
        return self.path / REPORT_FILE

    @property
    def live(self) -> Path:
        """``live.json``."""
        return self.path / LIVE_FILE

    @property
    def lock(self) -> Path:
        """``.lock``."""
        return self.path / LOCK_FILE

    def previous(self, name: str) -> Path:
        """Where a resume moves the file ``name`` (one of :data:`PREVIOUS`' keys)."""
        return self.path / PREVIOUS[name]

    def records(self) -> tuple[Path, ...]:
        """The :data:`RECORD_FILES` of this directory, in their order."""
        return tuple(self.path / name for name in RECORD_FILES)

    def export(self, table: str, fmt: str) -> Path:
        """The file ``counterfact export`` writes for ``table`` (``runs``, ``verdicts`` ...) in
        format ``fmt`` (``csv``, ``parquet``).
        """
        return self.path / f"{table}.{fmt}"
