"""``live.json`` and the progress line's live numbers, refreshed about once a second.

A :class:`LiveTicker` runs a thread of its own: every :data:`EVERY_S` seconds (and at once when
the status changes) it reads the :class:`~.live.LiveTracker`'s counts and the executor's
limiter, writes the snapshot to ``live.json`` atomically (temp file, fsync, rename: a reader
never sees half a file) and hands it to the progress display. The thread, not the stream of
records, keeps the clock: a sweep whose runs all hang for a minute still refreshes
``updated_at`` every second, so a reader can tell a slow sweep from a dead one. The driver's
thread never waits for it; :meth:`LiveTicker.close` writes the last snapshot with the status the
sweep ended in.

A snapshot that cannot be written (disk full, directory gone) is logged once and skipped: the
progress file must never stop a sweep.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from counterfact.orchestrator.engine.pacing.throttle import ThrottleNow
from counterfact.orchestrator.engine.watching.events import Logger, get_logger
from counterfact.orchestrator.engine.watching.live import LiveTracker
from counterfact.orchestrator.storage.atomic import write_atomic
from counterfact.records.live import LiveState, LiveStatus

EVERY_S = 1.0
"""Seconds between two snapshots."""
CLOSE_WAIT_S = 5.0
"""How long the last snapshot waits for a write in progress (a hung filesystem)."""

Show = Callable[[LiveState], None]
"""Told each snapshot (the progress display)."""


class LiveTicker:
    """Writes ``path`` (``live.json``; None: none) and calls ``show`` about once a second."""

    def __init__(
        self,
        tracker: LiveTracker,
        throttle: Callable[[], ThrottleNow | None],
        path: Path | None,
        show: Show | None = None,
        *,
        every_s: float = EVERY_S,
        log: Logger | None = None,
    ) -> None:
        self.tracker = tracker
        self.path = path
        self._throttle = throttle
        self._show = show
        self._every = every_s
        self._log = log if log is not None else get_logger()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._last_view: ThrottleNow | None = None
        self._warned: set[str] = set()
        self._before = self._read_throttle()
        """The executor's limiter before this sweep (a reused executor's refusals are not ours)."""

    def start(self) -> None:
        """Write the first snapshot now, then keep refreshing it from a daemon thread."""
        self.tick()
        if self.path is None and self._show is None:
            return  # nothing to refresh
        self._thread = threading.Thread(target=self._loop, name="counterfact-live", daemon=True)
        self._thread.start()

    def mark(self, status: LiveStatus) -> None:
        """The sweep moved on to ``status``: say so at once."""
        self.tracker.mark(status)
        self._wake.set()

    def close(self, status: LiveStatus) -> None:
        """Stop the thread and write the last snapshot, with the status the sweep ended in."""
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(CLOSE_WAIT_S)
            self._thread = None
        self.tracker.mark(status)
        self.tick(wait_s=CLOSE_WAIT_S)

    def _loop(self) -> None:
        while True:
            self._wake.wait(self._every)
            self._wake.clear()
            if self._stopping.is_set():
                return
            self.tick()

    def _view(self) -> ThrottleNow | None:
        """The executor's limiter; the last one seen once the executor closed (Ray's pool is gone
        by the time the sweep judges: its last reading is the sweep's).
        """
        view = self._read_throttle()
        if view is not None:
            self._last_view = view
        return self._last_view

    def _read_throttle(self) -> ThrottleNow | None:
        try:
            return self._throttle()
        except Exception as exc:  # an executor that cannot say: keep the last reading, say so once
            note = "the live limit and 429s keep their last reading until a read succeeds"
            self._warn("live.throttle_unread", exc, note=note)
            return None

    def tick(self, wait_s: float = -1) -> LiveState | None:
        """Build a snapshot, write it and show it (``wait_s``: how long to wait for a write in
        progress; -1: as long as it takes). Returns it (None: a write in progress was not done).
        """
        if not self._lock.acquire(timeout=wait_s):
            return None
        try:
            view = self._view()
            before = self._before
            refused = before.refused if before is not None and view is not None else 0
            state = self.tracker.snapshot(view, refused)
            self._write(state)
            if self._show is not None:
                try:
                    self._show(state)
                except Exception as exc:  # a display's error must not stop the sweep
                    self._warn("live.show_failed", exc)
            return state
        finally:
            self._lock.release()

    def _write(self, state: LiveState) -> None:
        if self.path is None:
            return
        try:
            write_atomic(self.path, state.model_dump_json(indent=2) + "\n")
        except OSError as exc:
            self._warn("live.write_failed", exc, path=str(self.path))

    def _warn(
        self,
        event: str,
        exc: Exception,
        note: str = "live progress is not refreshed; the sweep goes on",
        **fields: object,
    ) -> None:
        if event in self._warned:
            return
        self._warned.add(event)
        self._log.warning(event, error=f"{type(exc).__name__}: {exc}", note=note, **fields)
