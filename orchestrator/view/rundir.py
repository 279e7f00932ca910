"""One run directory's records as the pages need them, read once per version of each file.

``summary.json``, ``arms.jsonl`` and ``bisect.json`` are parsed again only when the file
changed (its inode, size or modification time); ``runs.jsonl`` and ``verdicts.jsonl`` are
indexed (:mod:`counterfact.orchestrator.view.index`); ``live.json`` is small and read on every
request. A file that cannot be read is :class:`~counterfact.orchestrator.view.files.Unreadable`
with a message naming it: the page says so instead of failing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import AliasChoices, AliasPath, BaseModel, ConfigDict, Field, ValidationError

from counterfact.orchestrator.view.files import RunDir, Unreadable, identity, read_whole
from counterfact.orchestrator.view.index import RunsIndex, VerdictsIndex
from counterfact.records.arms import ArmVerdictRecord
from counterfact.records.bisect import BisectRecord
from counterfact.records.files import parse_arms
from counterfact.records.live import LiveState
from counterfact.records.paths import RunPaths
from counterfact.records.summary import SweepSummary

T = TypeVar("T")

RECORD_LIMIT = 64 << 20
"""The largest ``summary.json``, ``arms.jsonl`` or ``bisect.json`` read (bytes): a larger one
is said to be too large, from its size, without reading it."""
INDEX_BUDGET_S = 0.25
"""Seconds a page spends indexing ``runs.jsonl`` and ``verdicts.jsonl`` (together: what is
left after the runs goes to the verdicts, at least one chunk each); the rest is indexed by a
background thread while the page shows what was read so far."""
BACKGROUND_STEP_S = 0.2
"""Seconds the background thread indexes at a time, holding the run's lock."""
LIVE_LIMIT = 1 << 20
STALE_S = 30.0
"""A ``running`` live state not rewritten for this long: the sweep is probably gone."""
ACTIVE = frozenset({"starting", "running", "judging"})
"""Live statuses of a sweep still at work."""
ROW_ENTRY_BYTES = 300
"""Memory an index entry of ``verdicts.jsonl`` holds, about (11.8 MiB for 40,000 rows)."""
RECORD_FACTOR = 5
"""Memory a parsed ``summary.json``, ``arms.jsonl`` or ``bisect.json`` holds per byte of its
file, about (31.7 MiB for a 6.5 MB summary of 10,000 questions)."""


def _parsed(path: Path, data: bytes, parse: Callable[[bytes], T]) -> T:
    try:
        return parse(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        if error["type"] == "json_invalid":
            msg = f"{path.name} is not valid JSON: {error['msg']}"
            raise Unreadable(msg) from exc
        where = ".".join(str(p) for p in error["loc"]) or "(top level)"
        msg = f"{path.name} is not a valid record: {where}: {error['msg']}"
        raise Unreadable(msg) from exc
    except ValueError as exc:
        msg = f"{path.name} is not valid JSON: {str(exc)[:200]}"
        raise Unreadable(msg) from exc


class _Cached(Generic[T]):
    """A file's parsed content, parsed again only when the file changed."""

    def __init__(self, path: Path, parse: Callable[[bytes], T], limit: int) -> None:
        self.path = path
        self._parse = parse
        self._limit = limit
        self._lock = threading.Lock()
        self._seen: object = object()
        self._value: T | None = None
        self._error: Unreadable | None = None
        self.size = 0
        """Bytes of the file parsed now (0 when none is held)."""

    def held(self) -> T | None:
        """The value already parsed, when the file has not changed since; else None (nothing
        is read or parsed).
        """
        with self._lock:
            return self._value if identity(self.path) == self._seen else None

    def get(self) -> T | None:
        with self._lock:
            now = identity(self.path)
            if now != self._seen:
                self._seen = now
                self._value, self._error, self.size = None, None, 0
                try:
                    data = read_whole(self.path, self._limit)
                    self._value = None if data is None else _parsed(self.path, data, self._parse)
                    self.size = 0 if data is None else len(data)
                except Unreadable as exc:
                    self._error = exc
            if self._error is not None:
                raise self._error
            return self._value


class SummaryHead(BaseModel):
    """What the list and a page's status need of ``summary.json``: validated alone, the rest of
    the file skipped (10,000 questions make it megabytes, and a served folder may hold many; the
    whole record takes about 8x as long).
    """

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    name: str
    status: str = Field(
        default="complete",
        validation_alias=AliasChoices(AliasPath("execution", "status"), "status"),
    )
    """``execution.status`` (at the top level before version 10)."""
    failure: str | None = Field(
        default=None,
        validation_alias=AliasChoices(AliasPath("execution", "failure"), "failure"),
    )


def age_s(stamp: str, now: datetime | None = None) -> float | None:
    """Seconds since an ISO 8601 time; None when it does not parse."""
    try:
        then = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if then.tzinfo is None:
        then = then.replace(tzinfo=timezone.utc)
    return ((now or datetime.now(timezone.utc)) - then).total_seconds()


def stale_note(live: LiveState, age: float | None) -> str | None:
    """Why the live state of a sweep at work looks abandoned (``age``: seconds since it was
    rewritten, more than :data:`STALE_S`), or None.
    """
    if live.status not in ACTIVE or age is None or age <= STALE_S:
        return None
    return f"no update for {duration(age)}: the sweep may have stopped"


@dataclass(frozen=True)
class Status:
    """Where a run directory's sweep is, in one word and a note."""

    word: str
    """``running``, ``judging`` ... (a live sweep), else the summary's status (``complete``
    ...), ``bisection`` or ``runs only``."""
    active: bool
    """The sweep is at work (its live state says so and is fresh)."""
    note: str = ""


class RunView:
    """The records of one run directory."""

    def __init__(self, entry: RunDir) -> None:
        self.entry = entry
        self.lock = threading.RLock()
        """Held while a page refreshes and reads the indexes (requests run in threads: one
        must not iterate what another's refresh is extending)."""
        path = entry.path
        paths = RunPaths(path)
        self.runs = RunsIndex(paths.runs)
        self.verdicts = VerdictsIndex(paths.verdicts)
        self._summary = _Cached(paths.summary, SweepSummary.model_validate_json, RECORD_LIMIT)
        self._head = _Cached(paths.summary, SummaryHead.model_validate_json, RECORD_LIMIT)
        self._arms = _Cached(paths.arms, parse_arms, RECORD_LIMIT)
        self._bisect = _Cached(paths.bisect, BisectRecord.model_validate_json, RECORD_LIMIT)
        self._behind: threading.Thread | None = None
        self._closed = threading.Event()
        self.used = time.monotonic()
        """When a page last asked for its indexes (the catalog evicts the least recent)."""

    @property
    def id(self) -> str:
        """The run directory's id in URLs."""
        return self.entry.id

    def summary(self) -> SweepSummary | None:
        """``summary.json``, or None before the sweep wrote it."""
        return self._summary.get()

    def summary_head(self) -> SummaryHead | None:
        """The name and status of ``summary.json`` (from the whole record when a page already
        read it, else without validating the rest), or None.
        """
        whole = self._summary.held()
        if whole is not None:
            return SummaryHead(
                name=whole.name, status=whole.execution.status, failure=whole.execution.failure
            )
        return self._head.get()

    def bisect(self) -> BisectRecord | None:
        """``bisect.json``, or None (a sweep)."""
        return self._bisect.get()

    def arms(self) -> list[ArmVerdictRecord]:
        """The arm-level verdicts: ``arms.jsonl``, else the summary's (empty before either)."""
        found = self._arms.get()
        if found is not None:
            return found
        summary = self.summary()
        return list(summary.arms) if summary is not None else []

    def live(self) -> LiveState | None:
        """``live.json`` as it is now, or None when the sweep wrote none."""
        path = RunPaths(self.entry.path).live
        data = read_whole(path, LIVE_LIMIT)
        return None if data is None else _parsed(path, data, LiveState.model_validate_json)

    def indexed(self, budget_s: float | None = None) -> RunView:
        """Refresh both indexes (cheap when the files did not change) for at most about
        ``budget_s`` seconds together (:data:`INDEX_BUDGET_S` by default), and return self; what
        is left is indexed in the background (:meth:`progress` says how far it is).
        """
        budget = INDEX_BUDGET_S if budget_s is None else budget_s
        self.used = time.monotonic()
        self.runs.refresh(budget)
        self.verdicts.refresh(max(0.0, budget - (time.monotonic() - self.used)))
        if not self.runs.complete or not self.verdicts.complete:
            self._index_behind()
        return self

    def footprint(self) -> int:
        """Bytes its indexes and parsed records hold, estimated from their entries and sizes."""
        records = self._summary.size + self._arms.size + self._bisect.size
        return (
            self.runs.footprint() + self.verdicts.held * ROW_ENTRY_BYTES + records * RECORD_FACTOR
        )

    def close(self) -> None:
        """Stop indexing in the background (the catalog dropped this view: evicted)."""
        self._closed.set()

    def progress(self) -> str:
        """How far an incomplete index is (``""`` once both are complete)."""
        return "; ".join(p for p in (self.runs.progress(), self.verdicts.progress()) if p)

    def _index_behind(self) -> None:
        with self.lock:
            if self._closed.is_set() or (self._behind is not None and self._behind.is_alive()):
                return
            self._behind = threading.Thread(target=self._finish, daemon=True, name="view-index")
            self._behind.start()

    def _finish(self) -> None:
        """Index both files to their end, a step at a time, letting pages in between."""
        while not self._closed.is_set():
            with self.lock:
                try:
                    self.runs.refresh(BACKGROUND_STEP_S)
                    self.verdicts.refresh(BACKGROUND_STEP_S)
                except Unreadable:
                    return  # the next page says why
                if self.runs.complete and self.verdicts.complete:
                    return
            time.sleep(0.01)

    def name(self) -> str:
        """The sweep's name: the summary's, the live state's, else the folder's."""
        for read in (self.summary_head, self.live):
            try:
                found = read()
            except Unreadable:
                continue
            if found is not None:
                return found.name if isinstance(found, SummaryHead) else found.sweep
        return self.entry.path.name

    def status(self) -> Status:
        """Where the sweep is: a fresh active live state wins over an older summary."""
        live = self.live()
        if live is not None and live.status in ACTIVE:
            note = stale_note(live, age_s(live.updated_at))
            if note is not None:
                return Status(live.status, False, note)
            return Status(live.status, True)
        head = self.summary_head()
        if head is not None:
            return Status(head.status, False, head.failure or "")
        bisect = self.bisect()
        if bisect is not None:
            return Status("bisection", False, f"{bisect.verdict} ({bisect.reason})")
        if live is not None:
            return Status(live.status, False)
        return Status("runs only", False, "no summary.json yet")

    def baseline_of(self, scenario: str) -> str | None:
        """The question's baseline arm from the records (None while none says)."""
        found = self.verdicts.baseline_of.get(scenario)
        if found is not None:
            return found
        summary = self.summary()
        if summary is not None:
            return next((s.baseline for s in summary.scenarios if s.id == scenario), None)
        return None


def indexing(run: RunView) -> str:
    """A note while ``run``'s indexes are incomplete (the page shows what was read so far)."""
    progress = run.progress()
    if not progress:
        return ""
    return f'<p class="note">Still indexing: {progress}; reload for the rest.</p>'


def duration(seconds: float) -> str:
    """Seconds in words: ``42 s``, ``7 min``, ``2.5 h``."""
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
