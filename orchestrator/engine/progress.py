"""Progress while runs execute: a bar on a terminal, periodic log events otherwise."""

from __future__ import annotations

import sys
import time
from typing import Any, Protocol

import click

from counterfact.orchestrator.engine.events import get_logger


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


class TerminalProgress:
    """click's progress bar with done/total, the run rate and an ETA from that rate."""

    def __init__(self) -> None:
        self._bar: Any = None
        self._t0 = 0.0
        self._done = 0
        self._failed = 0
        self._total = 0

    def _label(self, _item: object) -> str:
        rate = self._done / max(time.perf_counter() - self._t0, 1e-9)
        failed = f", {self._failed} failed" if self._failed else ""
        left = self._total - self._done
        eta = f", ETA {int(left / rate) // 60:02d}:{int(left / rate) % 60:02d}" if rate else ""
        return f"{rate:.1f} runs/s{eta}{failed}"

    def start(self, total: int) -> None:
        """Draw the bar on stderr."""
        self._t0 = time.perf_counter()
        self._total = total
        self._bar = click.progressbar(
            length=total,
            label="runs",
            show_eta=False,
            show_pos=True,
            item_show_func=self._label,
            file=sys.stderr,
        )
        self._bar.__enter__()

    def advance(self, ok: bool) -> None:
        """Advance the bar by one run."""
        self._done += 1
        self._failed += 0 if ok else 1
        self._bar.update(1, current_item=self._done)

    def finish(self) -> None:
        """Remove the bar."""
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None

    def phase(self, text: str) -> None:
        """One line on stderr."""
        click.echo(f"{text}…", err=True)


class LogProgress:
    """A ``sweep.progress`` log event at most every ``every_s`` seconds."""

    def __init__(self, every_s: float = 5.0) -> None:
        self._log = get_logger()
        self._every = every_s
        self._t0 = self._last = 0.0
        self._total = self._done = self._failed = 0

    def start(self, total: int) -> None:
        """Start the clock."""
        self._t0 = self._last = time.perf_counter()
        self._total = total

    def advance(self, ok: bool) -> None:
        """Count the run; log progress at most every ``every_s`` seconds."""
        self._done += 1
        self._failed += 0 if ok else 1
        now = time.perf_counter()
        if now - self._last >= self._every:
            self._last = now
            rate = self._done / max(now - self._t0, 1e-9)
            self._log.info(
                "sweep.progress",
                done=self._done,
                total=self._total,
                failed=self._failed,
                rate=round(rate, 2),
                eta_s=round((self._total - self._done) / rate, 1) if rate else None,
            )

    def finish(self) -> None:
        """Nothing to clean up."""

    def phase(self, text: str) -> None:
        """A ``sweep.phase`` log event."""
        self._log.info("sweep.phase", step=text)
