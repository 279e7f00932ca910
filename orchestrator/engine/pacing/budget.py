"""Spend budgets: stop scheduling before what is recorded plus what is in flight would pass a
limit.

A :class:`Budget` watches every record of the run directory (read back on a resume, or new;
records taken from the run cache cost nothing this time and are not counted) and sums the
``cost`` keys it limits. A run may start only while

    spent + (in flight + 1) x (mean cost per recorded run) <= limit

for every limited key (``runs`` counts a run's model calls, its ``attempts``, not a ``cost``
key), so the runs in flight are reserved at the running cost per run (the mean
over runs that reported the key: a failed run that reported nothing is reserved at the mean,
not at zero). Until a first run with a cost is recorded the mean is unknown and nothing is held
back: the first round (about ``concurrency`` runs, or a few per CPU) starts on trust. Once a run
may not start, the feed is closed: what is in flight finishes and is recorded, nothing more
starts, and the driver judges what ran.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from counterfact.records.execution import BudgetRecord
from counterfact.records.runs import RunRecord

RUNS = "runs"
"""The one limit that is not a ``cost`` key: model calls, each run's ``attempts`` (``budget:
{runs: N}``; ``blame --budget runs=N``)."""


class Budget:
    """Limits per cost key, and the spend recorded against them."""

    def __init__(self, limits: Mapping[str, float]) -> None:
        self.limits = {k: float(v) for k, v in limits.items()}
        self.spent = dict.fromkeys(self.limits, 0.0)
        self.reported = dict.fromkeys(self.limits, 0)
        """Per key: recorded runs whose cost reported it (the mean's denominator)."""
        self.in_flight = 0
        self.exhausted: list[str] = []
        """Keys whose limit stopped scheduling."""
        self.not_started = 0
        """Queued runs withdrawn when the budget stopped scheduling."""

    def observe(self, record: RunRecord) -> None:
        """Count a record's spend (every record the run store takes)."""
        if record.from_cache:
            return
        cost = record.cost or {}
        for key in self.limits:
            value = float(record.attempts) if key == RUNS else cost.get(key)
            # runners cannot report a negative or NaN cost, and a record that holds one (edited by
            # hand, or older) is read with it refused (RunRecord.cost_refused); kept as a guard
            if value is None or math.isnan(value) or value < 0:
                continue
            self.spent[key] += value
            self.reported[key] += 1

    def charge(self, cost: Mapping[str, float]) -> None:
        """Count spend that is not a run's (a model judge's call) against the limits it names:
        it adds to what is spent, not to the runs that reported a cost, so the mean cost per run
        that reserves the runs in flight carries the judging each run brings.
        """
        for key in self.limits:
            value = cost.get(key)
            if value is not None and value > 0:
                self.spent[key] += value

    def started(self, n: int) -> None:
        """``n`` runs were handed to the executor."""
        self.in_flight += n

    def finished(self) -> None:
        """A run handed out came back as a record."""
        self.in_flight = max(0, self.in_flight - 1)

    def mean(self, key: str) -> float | None:
        """Mean recorded cost per run of ``key``; None before any run cost something."""
        if not self.reported[key] or self.spent[key] <= 0:
            return None
        return self.spent[key] / self.reported[key]

    def room(self) -> int | None:
        """How many more runs may start now (None: no limit yet binds)."""
        rooms: dict[str, int] = {}
        for key, limit in self.limits.items():
            mean = self.mean(key)
            if math.isinf(self.spent[key]):
                rooms[key] = 0
                continue
            if mean is None:
                if self.spent[key] > limit:
                    rooms[key] = 0
                continue
            rooms[key] = max(
                0, math.floor((limit - self.spent[key]) / mean + 1e-9) - self.in_flight
            )
        if not rooms:
            return None
        least = min(rooms.values())
        if least == 0 and not self.exhausted:
            self.exhausted = sorted(k for k, r in rooms.items() if r == 0)
        return least

    def record(self, runs_not_started: int | None = None) -> BudgetRecord:
        """``summary.json``'s ``budget``; ``runs_not_started``: the planned runs the budget left
        unstarted (the driver knows them; None: not a budget's stop, or a sequential sweep).
        """
        return BudgetRecord(
            limits=dict(self.limits),
            spent={k: round(v, 6) for k, v in self.spent.items()},
            exhausted=list(self.exhausted),
            runs_not_started=runs_not_started,
        )
