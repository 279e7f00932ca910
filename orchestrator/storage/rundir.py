"""The run directory: ``runs.jsonl`` appended and flushed per batch of runs that arrived together
(before any of them is counted) and synced at checkpoints, the ``sweep.json`` fingerprint,
resume, one writer at a time, and atomic writes of the other records.

Running again on a directory that holds records *resumes*: finished runs are read back, a torn
last line (a crash mid-write) is dropped and reported, and the new plan must not change what old
runs mean (:mod:`counterfact.orchestrator.storage.fingerprints`). ``fresh`` moves the old
directory aside (never deletes it) and starts anew.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from counterfact.exceptions import RunDirectoryError
from counterfact.orchestrator.storage.atomic import write_atomic, write_error, write_json, writing
from counterfact.orchestrator.storage.dirchecks import (
    FIRST_LINE_KEY,
    check_run_dir,
    digest_of,
    first_line_digest,
    move_aside,
    read_fingerprint,
    refuse_foreign_links,
    refuse_shared_files,
    remove_litter,
    retire_previous,
)
from counterfact.orchestrator.storage.lockfile import open_lock
from counterfact.orchestrator.storage.recordfiles import RunLogReader
from counterfact.orchestrator.storage.writable import record_line
from counterfact.records.fingerprint import Fingerprint, merged
from counterfact.records.paths import SUMMARY_FILE, RunPaths
from counterfact.records.runs import RunRecord

if TYPE_CHECKING:  # only annotations: validate stays free of the judging path's imports
    from pydantic import BaseModel

    from counterfact.records.arms import ArmVerdictRecord
    from counterfact.records.summary import SweepSummary
    from counterfact.records.verdicts import VerdictRecord

SYNC_EVERY_S = 2.0
"""``runs.jsonl`` is fsynced at most this often while runs stream in, and when the store closes."""

Key = tuple[str, str, int]


Known = tuple[set[str], set[str], bool]
"""Scenario ids, arm ids, and whether probe arms (``ablate:[...]``, a bisection's) belong."""


def _known(old: Fingerprint | None, new: Fingerprint | None) -> Known | None:
    """Every scenario and arm any version of this directory's sweep declared (``sweep.json``
    keeps removed ones, and the new plan adds its own); None when there is nothing to check
    against (no fingerprint, or a directory without ``sweep.json``).
    """
    if new is None or old is None or "arms" not in old.model_fields_set:
        return None
    scenarios = set(old.scenarios) | set(new.scenarios)
    arms = set(old.arms) | set(new.arms)
    return scenarios, arms, "bisection" in (old.kind, new.kind)


def _refuse_foreign(record: RunRecord, known: Known, runs: Path, line: int) -> None:
    """A record of a scenario or arm no version of the sweep declared: another sweep's line.

    Raises:
        RunDirectoryError: naming the line.
    """
    scenarios, arms, probes = known
    arm_known = record.arm in arms or (probes and record.arm.startswith("ablate:"))
    if record.scenario in scenarios and arm_known:
        return
    what = (
        f"scenario {record.scenario!r}"
        if record.scenario not in scenarios
        else f"arm {record.arm!r}"
    )
    msg = (
        f"{runs} line {line}: a record of {what}, which is not part of this sweep (sweep.json "
        "names it in no version of it): another sweep's lines were spliced in? Move runs.jsonl "
        "aside, or pass --fresh"
    )
    raise RunDirectoryError(msg, run_dir=runs.parent)


def _ends_without_newline(path: Path) -> bool:
    """True when ``path`` is non-empty and its last byte is not a newline (reads one byte)."""
    if not path.exists() or path.stat().st_size == 0:
        return False
    with path.open("rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) != b"\n"


DENSE_SEEDS = 1 << 24
"""Seeds a :class:`DoneIndex` keeps as bits (2 MiB per (scenario, arm) at most); a seed past
it (a hand-edited record: seed 10^15 once asked for 1.78 PiB) is kept in a set."""


class DoneIndex:
    """Which (scenario, arm, seed) have a record: one bit per seed, not one object per run."""

    def __init__(self) -> None:
        self._bits: dict[tuple[str, str], np.ndarray[Any, np.dtype[np.bool_]]] = {}
        self._sparse: set[Key] = set()
        self.count = 0

    def __contains__(self, key: Key) -> bool:
        if key[2] >= DENSE_SEEDS:
            return key in self._sparse
        bits = self._bits.get((key[0], key[1]))
        return bits is not None and 0 <= key[2] < len(bits) and bool(bits[key[2]])

    def add(self, key: Key) -> bool:
        """Mark ``key`` done; False when it already was."""
        if key in self or key[2] < 0:
            return False
        if key[2] >= DENSE_SEEDS:
            self._sparse.add(key)
            self.count += 1
            return True
        pair = (key[0], key[1])
        bits = self._bits.get(pair)
        if bits is None or key[2] >= len(bits):
            grown = np.zeros(min(max(64, 2 * (key[2] + 1)), DENSE_SEEDS), dtype=bool)
            if bits is not None:
                grown[: len(bits)] = bits
            bits = self._bits[pair] = grown
        bits[key[2]] = True
        self.count += 1
        return True


class RunStore:
    """Where one sweep's records go, streamed: each record is written, handed to ``sink`` (the
    driver's tallies) and forgotten, unless ``keep`` (default: when there is no directory, where
    memory is the only copy) holds them for :attr:`records`.
    """

    def __init__(
        self,
        run_dir: Path | None,
        *,
        fresh: bool = False,
        fingerprint: Fingerprint | None = None,
        sink: Callable[[RunRecord], None] | None = None,
        keep: bool | None = None,
        seeds: int | None = None,
    ) -> None:
        self.run_dir = run_dir
        self.seeds = seeds
        """Seeds ``0..seeds-1`` the plan can use (None: any); a read-back record of a seed past
        them is not this plan's: counted in :attr:`beyond`, not indexed."""
        self.beyond = 0
        """Read-back records of seeds past :attr:`seeds` (ignored; kept in the file)."""
        self.fresh = fresh
        self.fingerprint = fingerprint
        self.sink = sink
        self.keep = run_dir is None if keep is None else keep
        self.reused = 0
        """Records read back from the directory (a resume)."""
        self.failed = 0
        """Records of failed runs, read back or appended."""
        self.rate_limited = 0
        """Records of runs that waited on a rate limit at least once, read back or appended."""
        self.torn = False
        self.moved_to: Path | None = None
        self.done = DoneIndex()
        self._keys: dict[Key, RunRecord] = {}
        self._fh: IO[str] | None = None
        self._lock_fh: IO[str] | None = None
        self._synced = time.monotonic()
        self._first_line: str | None = None
        """SHA-256 of ``runs.jsonl``'s first line, recorded in ``sweep.json``."""
        self._meaning: Fingerprint | None = None

    def __enter__(self) -> RunStore:
        """Open the store; on any failure release what was taken (the directory lock)."""
        try:
            self.open()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def open(self) -> None:
        """Check the directory, read back its runs (resume), record the fingerprint, open the log.

        Prefer ``with RunStore(...) as store:``, which closes (and unlocks) on every path.

        Raises:
            RunDirectoryError: see :func:`check_run_dir`.
        """
        if self.run_dir is None:
            return
        fingerprint = self.fingerprint
        check_run_dir(self.run_dir, fingerprint, fresh=self.fresh)
        if self.fresh and self.run_dir.exists():
            self.moved_to = self._move_old(self.run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._lock(self.run_dir)
        refuse_foreign_links(self.run_dir)
        refuse_shared_files(self.run_dir)
        remove_litter(self.run_dir)
        paths = RunPaths(self.run_dir)
        runs, stored = paths.runs, paths.fingerprint
        old = read_fingerprint(stored) if stored.exists() else None
        self._first_line = first_line_digest(runs, old.runs_first_line_sha256 if old else None)
        reader = RunLogReader(runs)
        known = _known(old, fingerprint)
        for record in reader:
            if known is not None:
                _refuse_foreign(record, known, runs, reader.line)
            if self.seeds is not None and record.seed >= self.seeds:
                self.beyond += 1
                continue
            self.reused += self._take(record)
        if reader.torn:
            with runs.open("r+b") as fh:
                fh.truncate(reader.good_bytes)
        self.torn = reader.torn
        needs_newline = _ends_without_newline(runs)
        self._fh = runs.open("a", encoding="utf-8")
        if needs_newline:
            self._fh.write("\n")
            self._fh.flush()
        if self._first_line is None:  # a lone record just got its newline: it is the first
            self._first_line = first_line_digest(runs, None)
        if fingerprint is not None:
            self._meaning = merged(old, fingerprint)
            self._write_fingerprint()
        retire_previous(self.run_dir)  # every check passed: this open writes

    def _write_fingerprint(self) -> None:
        """``sweep.json``: what the runs mean, and the digest of ``runs.jsonl``'s first line."""
        if self.run_dir is None or self._meaning is None:
            return
        first = {FIRST_LINE_KEY: self._first_line} if self._first_line else {}
        meaning = self._meaning.as_data() | first
        write_json(RunPaths(self.run_dir).fingerprint, meaning, sort_keys=True)

    def _move_old(self, run_dir: Path) -> Path:
        """Move the old directory aside holding its lock: a live driver's is refused."""
        self._lock(run_dir)  # raises when another process holds it
        try:
            return move_aside(run_dir)
        finally:
            self._unlock()

    def _unlock(self) -> None:
        if self._lock_fh is not None:
            fcntl.flock(self._lock_fh.fileno(), fcntl.LOCK_UN)
            self._lock_fh.close()
            self._lock_fh = None

    def _lock(self, run_dir: Path) -> None:
        """Hold an exclusive lock on the directory while the store is open (one writer).

        The ``.lock`` is opened without following a link and without blocking, and must be a
        regular file: a symlink would create its target, a FIFO would wait for a reader.
        """
        self._lock_fh = open_lock(RunPaths(run_dir).lock)
        try:
            fcntl.flock(self._lock_fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            self._lock_fh.close()
            self._lock_fh = None
            msg = (
                f"run directory {str(run_dir)!r} is in use by another counterfact process; "
                "wait for it to finish, or pass --out NEW_DIR"
            )
            raise RunDirectoryError(msg, run_dir=run_dir) from exc

    def _take(self, record: RunRecord) -> bool:
        """Index, count, keep and pass on a record; False for a duplicate key (ignored)."""
        key = (record.scenario, record.arm, record.seed)
        if not self.done.add(key):
            return False
        self._pass_on(key, record)
        return True

    def _pass_on(self, key: Key, record: RunRecord) -> None:
        self.failed += not record.ok
        self.rate_limited += record.rate_limited > 0
        if self.keep:
            self._keys[key] = record
        if self.sink is not None:
            self.sink(record)

    @property
    def records(self) -> list[RunRecord]:
        """The records kept in memory (read back first, then this session's); empty unless
        ``keep``.
        """
        return list(self._keys.values())

    def has(self, scenario: str, arm: str, seed: int) -> bool:
        """True when (scenario, arm, seed) already has a record (read back or appended)."""
        return (scenario, arm, seed) in self.done

    def get(self, scenario: str, arm: str, seed: int) -> RunRecord | None:
        """The kept record of (scenario, arm, seed), or None (not done, or not ``keep``)."""
        return self._keys.get((scenario, arm, seed))

    def append(self, record: RunRecord) -> RunRecord:
        """Take a new record: with a directory, append its line (flushed, synced at checkpoints)
        *before* handing it on, so nothing the sink does can lose a finished run. Returns the
        record as stored: text UTF-8 cannot encode is escaped (``text_escaped``), and a record
        that cannot be written at all is stored as a failed run
        (:mod:`~counterfact.orchestrator.storage.writable`).
        """
        return self.append_batch((record,))[0]

    def append_batch(
        self, records: Sequence[RunRecord], lines: Sequence[str] | None = None
    ) -> list[RunRecord]:
        """Take records that arrived together, as :meth:`append` does each, with one write and
        one flush: every new line is written and flushed *before* any of them is handed on, so
        no record the sink counted is lost to a crash (durability is "flushed before counted";
        a crash mid-batch leaves whole lines and at most a torn last one, which a resume drops
        and runs again).

        ``lines``: each record's line, when the worker already made it with
        :func:`~counterfact.orchestrator.storage.writable.record_line`. Returns the records as
        stored, in order (a duplicate of a recorded run is returned but neither written nor
        handed on).
        """
        stored: list[RunRecord] = []
        new: list[tuple[Key, RunRecord]] = []
        text: list[str] = []
        for i, given in enumerate(records):
            record, line = record_line(given) if lines is None else (given, lines[i])
            stored.append(record)
            key = (record.scenario, record.arm, record.seed)
            if self.done.add(key):
                new.append((key, record))
                text.append(line + "\n")
        if text:
            self._write(text)
        for key, record in new:
            self._pass_on(key, record)
        return stored

    def _write(self, lines: list[str]) -> None:
        """Append whole lines to ``runs.jsonl`` and flush them (fsync at checkpoints)."""
        if self._fh is None or self.run_dir is None:
            return
        try:  # no context manager and no path made per batch: in-process, a batch is one run
            self._fh.write("".join(lines))
            self._fh.flush()
            if time.monotonic() - self._synced >= SYNC_EVERY_S:
                os.fsync(self._fh.fileno())
                self._synced = time.monotonic()
        except OSError as exc:
            raise write_error(RunPaths(self.run_dir).runs, exc) from exc
        if self._first_line is None:  # the directory's first record: sweep.json says so
            self._first_line = digest_of(lines[0])
            self._write_fingerprint()

    def close(self) -> None:
        """Sync and close ``runs.jsonl``."""
        if self._fh is not None:
            fh, self._fh = self._fh, None
            try:
                fh.flush()
                os.fsync(fh.fileno())
            except OSError:  # disk full: the error that stopped the sweep is the one reported
                pass
            finally:
                with contextlib.suppress(OSError):
                    fh.close()
        self._unlock()

    def write_verdicts(self, verdicts: Iterable[VerdictRecord]) -> None:
        """Write ``verdicts.jsonl`` atomically (nothing without a directory)."""
        if self.run_dir is None:
            return
        text = "".join(v.model_dump_json() + "\n" for v in verdicts)
        path = RunPaths(self.run_dir).verdicts
        with writing(path):
            write_atomic(path, text)

    def write_arms(self, arms: Iterable[ArmVerdictRecord]) -> None:
        """Write ``arms.jsonl`` atomically (nothing without a directory)."""
        if self.run_dir is None:
            return
        text = "".join(a.model_dump_json() + "\n" for a in arms)
        path = RunPaths(self.run_dir).arms
        with writing(path):
            write_atomic(path, text)

    def write_summary(self, summary: SweepSummary) -> None:
        """Write ``summary.json`` atomically (nothing without a directory)."""
        if self.run_dir is not None:
            self.write_record(SUMMARY_FILE, summary)

    def write_record(self, name: str, record: BaseModel) -> None:
        """Write one JSON record file into the directory atomically (nothing without one)."""
        if self.run_dir is not None:
            write_json(self.run_dir / name, record.model_dump(mode="json", by_alias=True))
