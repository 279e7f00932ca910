"""Progress while runs execute: a bar on a terminal, periodic log events otherwise."""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

import click

from counterfact.orchestrator.engine.watching.events import get_logger
from counterfact.orchestrator.engine.watching.progressline import Shown, progress_text
from counterfact.records.live import LiveState

REDRAW_S = 0.1
"""Longest time the terminal's line goes without a redraw while runs finish."""
STALL_S = 1.0
"""A log event comes from a live snapshot only when no run was logged for this long."""
BAR_WIDTH = 10
"""The bar's narrowest (it takes what the text leaves of the terminal's width)."""
LINE_CLUTTER = len("runs  []  ") + BAR_WIDTH
"""Columns of the line that are not its text: the label, the brackets and the bar."""


class Progress(Protocol):
    """Told how many runs there are, then about each finished run."""

    def start(self, total: int) -> None:
        """A sweep of ``total`` runs starts."""
        ...

    def advance(self, ok: bool) -> None:
        """One run finished (``ok`` False: it failed)."""
        ...

    def finish(self) -> None:
        """The sweep ended (finished, failed or interrupted)."""
        ...

    def phase(self, text: str) -> None:
        """A step after the runs started (``judging 10,000 questions``)."""
        ...

    def live(self, state: LiveState) -> None:
        """The sweep's latest live snapshot (about once a second, from another thread): in
        flight, 429s waited, the current concurrency, spend.
        """
        ...


class NoProgress:
    """Shows nothing."""

    def start(self, total: int) -> None:
        """Ignore the start."""

    def advance(self, ok: bool) -> None:
        """Ignore the run."""

    def finish(self) -> None:
        """Ignore the end."""

    def phase(self, text: str) -> None:
        """Ignore the step."""

    def live(self, state: LiveState) -> None:
        """Ignore the snapshot."""


class TerminalProgress:
    """click's progress bar on stderr, with the line of :func:`~.progressline.progress_text`.

    A finished run only counts (two additions and a clock read); the line is redrawn at most
    every :data:`REDRAW_S` seconds from the driver's thread, and when a live snapshot arrives
    (about once a second, from the ticker's thread: a sweep where nothing finishes still shows
    its in-flight runs and 429s move). A lock keeps the two from drawing at once.
    """

    def __init__(self, width: int | None = None) -> None:
        self._bar: Any = None
        self._lock = threading.Lock()
        self._width = width
        """Columns (None: the terminal's, read at each redraw)."""
        self._state: LiveState | None = None
        self._t0 = self._drawn = 0.0
        self._done = self._failed = self._total = self._shown = 0

    def start(self, total: int) -> None:
        """Draw the bar on stderr."""
        with self._lock:
            self._t0 = self._drawn = time.perf_counter()
            self._total = total
            self._bar = click.progressbar(
                length=total,
                label="runs",
                show_eta=False,
                show_pos=False,
                show_percent=False,
                item_show_func=_as_text,
                file=sys.stderr,
                width=0 if self._width is None else BAR_WIDTH,
            )
            self._bar.current_item = f"0/{total:,}"
            self._bar.__enter__()

    def advance(self, ok: bool) -> None:
        """Count one run; redraw when the line is older than :data:`REDRAW_S`."""
        self._done += 1
        if not ok:
            self._failed += 1
        now = time.perf_counter()
        if now - self._drawn >= REDRAW_S:
            self._draw(now)

    def live(self, state: LiveState) -> None:
        """Take the latest snapshot and redraw."""
        self._state = state
        self._draw(time.perf_counter())

    def _draw(self, now: float) -> None:
        with self._lock:
            bar = self._bar
            if bar is None:
                return
            self._drawn = now
            columns = self._width or shutil.get_terminal_size().columns
            text = progress_text(self._shown_now(now), width=columns - LINE_CLUTTER)
            steps, self._shown = self._done - self._shown, self._done
            bar.current_item = text
            if steps:
                bar.make_step(steps)
            bar.render_progress()

    def _shown_now(self, now: float) -> Shown:
        done = self._done
        rate = done / max(now - self._t0, 1e-9) if done else None
        state = self._state
        if state is None or state.status == "starting":  # from before the runs: no numbers yet
            return Shown(done, self._total, self._failed, rate)
        return Shown(
            done,
            self._total,
            self._failed,
            rate,
            in_flight=state.in_flight,
            waited_429=state.waited_429,
            concurrency=state.concurrency,
            concurrency_max=state.concurrency_max,
            spend=state.spend,
            budget=state.budget,
        )

    def finish(self) -> None:
        """Draw the last line, then remove the bar."""
        self._draw(time.perf_counter())
        with self._lock:
            if self._bar is not None:
                self._bar.__exit__(None, None, None)
                self._bar = None

    def phase(self, text: str) -> None:
        """One line on stderr."""
        click.echo(f"{text}…", err=True)


def _as_text(item: str | None) -> str | None:
    return item


class LogProgress:
    """A ``sweep.progress`` log event at most every ``every_s`` seconds: on a finished run, or on
    a live snapshot when no run finished meanwhile (a stalled sweep still reports).

    The event carries ``done``, ``total``, ``failed``, ``rate`` (runs/s), ``eta_s`` and, from the
    latest live snapshot, ``in_flight``, ``waited_429``, ``concurrency``, ``concurrency_max``
    and ``spend`` (null before the first snapshot).
    """

    def __init__(self, every_s: float = 5.0) -> None:
        self._log = get_logger()
        self._every = every_s
        self._t0 = self._last = 0.0
        self._total = self._done = self._failed = 0
        self._running = False
        self._state: LiveState | None = None
        self._lock = threading.Lock()

    def start(self, total: int) -> None:
        """Start the clock."""
        self._t0 = self._last = time.perf_counter()
        self._total = total
        self._running = True

    def advance(self, ok: bool) -> None:
        """Count the run; log progress at most every ``every_s`` seconds."""
        self._done += 1
        self._failed += 0 if ok else 1
        now = time.perf_counter()
        if now - self._last >= self._every:
            self._emit(now)

    def live(self, state: LiveState) -> None:
        """Keep the snapshot; log progress when none was logged for ``every_s`` seconds (at
        least :data:`STALL_S`): no run finished meanwhile.
        """
        self._state = state
        now = time.perf_counter()
        if self._running and now - self._last >= max(self._every, STALL_S):
            self._emit(now)

    def _emit(self, now: float) -> None:
        with self._lock:  # the ticker's thread and the driver's may both find it due
            if now - self._last < self._every:  # the other one just logged
                return
            self._last = now
            done = self._done
            rate = done / max(now - self._t0, 1e-9)
            state = self._state
            self._log.info(
                "sweep.progress",
                done=done,
                total=self._total,
                failed=self._failed,
                rate=round(rate, 2),
                eta_s=round((self._total - done) / rate, 1) if rate else None,
                in_flight=None if state is None else state.in_flight,
                waited_429=None if state is None else state.waited_429,
                concurrency=None if state is None else state.concurrency,
                concurrency_max=None if state is None else state.concurrency_max,
                spend=None if state is None else state.spend,
            )

    def finish(self) -> None:
        """No more events (the runs are over)."""
        self._running = False

    def phase(self, text: str) -> None:
        """A ``sweep.phase`` log event."""
        self._log.info("sweep.phase", step=text)


def live_hook(progress: Progress | None) -> Callable[[LiveState], None] | None:
    """``progress.live``; None without a progress object, or for one written before snapshots
    existed (a caller's own, with only ``start``, ``advance``, ``finish`` and ``phase``).
    """
    if progress is None:
        return None
    hook = getattr(progress, "live", None)
    return hook if callable(hook) else None
