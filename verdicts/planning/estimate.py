"""One estimate of a sweep's spend and wall time, shared by ``validate --smoke`` and ``plan``.

Both read a handful of finished runs (smoke runs, or a pilot's) and scale them to the runs a
sweep would make, with one formula and one wording, so that given the same per-run cost, run
time, runs in flight and rate limit they print the same figures:

- spend per cost key: the runs' mean per run (over the successful ones) times ``runs``;
- run time: ``runs / throughput``, the throughput being ``in_flight / run_s`` runs per second
  (``in_flight`` runs at once, each taking the mean run time ``run_s``), bounded by
  ``executor.rate_limit.requests_per_minute / 60`` when a rate limit is set;
- plus fixed phases the caller measured: process start-up (the interpreter and its imports,
  before the sweep's own clock starts; ``plan`` measures its own), start-up (the executor's
  start up to the first run) and judging and report (after the last run), each stated
  separately.

Money keys (``usd``, ``eur``, ``cost``, ...) print to the cent (four significant digits below
one), tokens as whole numbers with thousands separators.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from counterfact.records.runs import RunRecord
from counterfact.verdicts.wording.shared import duration

MONEY_KEYS = frozenset(
    {"usd", "eur", "gbp", "jpy", "cny", "chf", "cad", "aud", "dollars", "cost", "price", "spend"}
)
"""Cost keys read as money (also any key ending in ``_usd``, ``_eur``, ``_gbp``, ``_cost``)."""
_MONEY_SUFFIXES = ("_usd", "_eur", "_gbp", "_cost", "_dollars")


@dataclass(frozen=True)
class PerRun:
    """What one run costs on average, read from finished runs."""

    count: int
    """Runs read."""
    run_s: float
    """Mean run time, seconds (over every run: a failed run takes its time too)."""
    cost: dict[str, float]
    """Mean cost per successful run, per cost key."""


class RunTotals:
    """Sums over run records, one at a time (a pilot of 50,000 runs is never held at once)."""

    def __init__(self) -> None:
        self.count = 0
        self.duration_s = 0.0
        self._ok = 0
        self._cost_ok: dict[str, float] = {}
        self._cost_all: dict[str, float] = {}

    def add(self, record: RunRecord) -> None:
        """Count ``record`` in."""
        self.count += 1
        self.duration_s += record.duration_s
        self._ok += record.ok
        for key, value in (record.cost or {}).items():
            self._cost_all[key] = self._cost_all.get(key, 0.0) + value
            if record.ok:
                self._cost_ok[key] = self._cost_ok.get(key, 0.0) + value

    def per_run(self) -> PerRun:
        """The mean run time over every run and the mean cost per successful run (per run,
        when none succeeded).
        """
        if not self.count:
            return PerRun(0, 0.0, {})
        sums, n = (self._cost_ok, self._ok) if self._ok else (self._cost_all, self.count)
        cost = {k: sums[k] / n for k in sorted(sums)}
        return PerRun(self.count, self.duration_s / self.count, cost)


def per_run(records: Iterable[RunRecord]) -> PerRun:
    """The mean run time of ``records`` and their mean cost per successful run."""
    totals = RunTotals()
    for record in records:
        totals.add(record)
    return totals.per_run()


@dataclass(frozen=True)
class SweepEstimate:
    """The spend and wall time of ``runs`` runs, with the parts of the wall time."""

    runs: int
    spend: dict[str, float]
    run_s: float
    """The mean run time the estimate used."""
    in_flight: float
    """Runs in flight at once the estimate used."""
    in_flight_source: str
    """Where ``in_flight`` came from, in words (``configured``, ``the pilot achieved``, ...)."""
    per_minute: float | None
    """``executor.rate_limit.requests_per_minute`` (None: no rate limit)."""
    runs_s: float
    """Wall time of the runs themselves."""
    startup_s: float = 0.0
    """From the sweep's start (its executor started: Ray's start-up included) to its first run."""
    judging_s: float | None = None
    """Judging and report after the last run (None: not measured, left out)."""
    process_startup_s: float = 0.0
    """The command's own start-up before the sweep's clock starts: interpreter and imports."""

    @property
    def rate_bound(self) -> bool:
        """The rate limit, not the runs in flight, sets the pace."""
        if self.per_minute is None or self.run_s <= 0:
            return self.per_minute is not None
        return self.per_minute / 60.0 < self.in_flight / self.run_s

    @property
    def wall_s(self) -> float:
        """The whole: process start-up, start-up, runs, judging and report."""
        return self.process_startup_s + self.startup_s + self.runs_s + (self.judging_s or 0.0)


def estimate_sweep(
    runs: int,
    unit: PerRun,
    in_flight: float,
    per_minute: float | None,
    *,
    source: str = "configured",
    startup_s: float = 0.0,
    judging_s: float | None = None,
    process_startup_s: float = 0.0,
) -> SweepEstimate:
    """Spend and wall time of ``runs`` runs (see the module docstring for the formula)."""
    throughput = in_flight / unit.run_s if unit.run_s > 0 else float("inf")
    if per_minute is not None:
        throughput = min(throughput, per_minute / 60.0)
    runs_s = runs / throughput if runs and throughput > 0 and throughput != float("inf") else 0.0
    return SweepEstimate(
        runs=runs,
        spend={k: v * runs for k, v in unit.cost.items()},
        run_s=unit.run_s,
        in_flight=in_flight,
        in_flight_source=source,
        per_minute=per_minute,
        runs_s=runs_s,
        startup_s=startup_s,
        judging_s=judging_s,
        process_startup_s=process_startup_s,
    )


def is_money(key: str) -> bool:
    """Whether cost key ``key`` is an amount of money."""
    low = key.lower()
    return low in MONEY_KEYS or low.endswith(_MONEY_SUFFIXES)


def amount(key: str, value: float) -> str:
    """One cost figure: money to the cent (4 significant digits below one), tokens and other
    counts as whole numbers with thousands separators (4 significant digits below 100).
    """
    if is_money(key):
        return f"{value:,.2f}" if value == 0 or abs(value) >= 0.01 else f"{value:.4g}"
    if "token" in key.lower() or abs(value) >= 100:
        return f"{round(value):,}"
    return f"{value:.4g}"


def spend_text(spend: Mapping[str, float]) -> str:
    """``usd 0.45, tokens 12,345``; ``no cost reported`` without a key."""
    return ", ".join(f"{k} {amount(k, v)}" for k, v in spend.items()) or "no cost reported"


def estimate_text(e: SweepEstimate, *, at_most: bool = False) -> str:
    """The estimate in one line: runs, spend, and the wall time with each of its parts."""
    pace = f"{e.in_flight:.1f} run(s) in flight ({e.in_flight_source}) x mean run {e.run_s:.2f} s"
    if e.per_minute is not None:
        bound = "sets the pace" if e.rate_bound else "does not bind"
        pace += f", rate limit {e.per_minute:g}/min {bound}"
    parts = [f"runs ~{duration(e.runs_s)} ({pace})"]
    if e.process_startup_s > 0:
        parts.insert(0, f"process start-up ~{duration(e.process_startup_s)}")
    if e.startup_s > 0:
        parts.append(f"start-up ~{duration(e.startup_s)}")
    left_out = ""
    if e.judging_s is None:
        left_out = "; judging and report not included"
    else:
        parts.append(f"judging and report ~{duration(e.judging_s)}")
    most = "at most " if at_most else ""
    return (
        f"{most}{e.runs:,} runs: {spend_text(e.spend)}; wall time ~{duration(e.wall_s)} = "
        + " + ".join(parts)
        + left_out
    )
