"""The live state of a sweep: ``live.json``, rewritten (atomically) about once a second while the
sweep's runs execute, and a last time when it ends.

It is what the terminal's progress line shows and what ``counterfact view`` polls: runs done of
planned, in flight, 429s waited, the current concurrency, spend so far and an ETA. It is a
snapshot, not a record of history: ``runs.jsonl`` stays the durable account of every run, and a
sweep that died without a last write leaves ``status: running`` with an old ``updated_at`` (a
reader compares it with the clock: see :attr:`LiveState.updated_at`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from counterfact.records.parts import _Record

LIVE_SCHEMA_VERSION: Literal[1] = 1
"""1: the first version."""

LiveStatus = Literal["starting", "running", "judging", "finished", "stopped", "interrupted"]
"""``starting``: Ray or the workers are coming up; ``running``: runs execute; ``judging``: every
run is in and verdicts are being built; ``finished``: the sweep wrote its records;
``stopped``: it ended early (budget, failures, a sequential stop with runs left unplanned);
``interrupted``: Ctrl-C or a signal ended it."""


class LiveState(_Record):
    """One snapshot of a sweep's progress."""

    schema_version: Literal[1] = LIVE_SCHEMA_VERSION
    """Version of this record's layout."""
    sweep: str
    """The sweep's name (``name`` in the sweep file)."""
    status: LiveStatus
    """Where the sweep is (see :data:`LiveStatus`)."""
    started_at: str
    """When the sweep started (ISO 8601, UTC)."""
    updated_at: str
    """When this snapshot was written (ISO 8601, UTC). A ``running`` snapshot older than a few
    seconds means the sweep is gone (killed) or stalled."""
    runs_planned: int = Field(ge=0)
    """Runs the sweep plans (for a sequential sweep: the most it can run)."""
    runs_done: int = Field(ge=0)
    """Runs finished, failed ones included, resumed ones included."""
    runs_failed: int = Field(ge=0)
    """Of ``runs_done``, runs that ended in an error."""
    in_flight: int = Field(ge=0)
    """Runs started and not yet finished."""
    waited_429: int = Field(ge=0)
    """Rate-limit refusals (HTTP 429) waited out so far."""
    concurrency: int | None
    """The rate controller's current limit on runs in flight; null when nothing limits them."""
    concurrency_max: int | None
    """The configured ceiling (``executor.concurrency``); null when none is set."""
    spend: dict[str, float]
    """Cost so far per unit, e.g. ``{"usd": 1.25, "tokens": 48000}``."""
    budget: dict[str, float]
    """The sweep's spend limits per unit (``budget`` in the sweep file); empty when none."""
    runs_per_s: float | None
    """Runs finished per second since the runs started; null before the first."""
    eta_s: float | None
    """Seconds left at that rate; null when unknown."""
