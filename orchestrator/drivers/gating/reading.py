"""``--fail-on`` outside the CLI: read a finished sweep or bisection (a result, or its run
directory) against gate states, for ``counterfact.testing``.

The states and what they match are :mod:`counterfact.orchestrator.drivers.gating.states`'s: plain
states read the arm-level verdicts, ``scenario-<state>`` the per-question rows. A reading also keeps
the record's status, so a gate can refuse to pass on a sweep that did not finish.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from counterfact.exceptions import ConfigError, RunDirectoryError
from counterfact.orchestrator.drivers.bisect import BisectResult
from counterfact.orchestrator.drivers.gating.states import (
    GATE_STATES,
    bisect_hits,
    cannot_fire,
    sweep_hits,
)
from counterfact.orchestrator.drivers.sweep import SweepResult
from counterfact.orchestrator.storage.recordfiles import (
    bisect_of,
    require_records,
    summary_of,
    verdicts_of,
)
from counterfact.records.arms import ArmVerdictRecord
from counterfact.records.bisect import BisectRecord
from counterfact.records.summary import SweepSummary
from counterfact.records.verdicts import VerdictRecord


@dataclass(frozen=True)
class GateReading:
    """What a gate read from one sweep or bisection."""

    what: str
    """``sweep 'NAME'`` or ``bisection 'NAME'``."""
    status: str
    """The record's status: ``complete``, ``interrupted``, ``failed``, ``budget-exhausted``."""
    states: tuple[str, ...]
    """The states asked for, in the order given."""
    hits: tuple[str, ...]
    """``arm: state`` (or ``scenario/arm: scenario-state``, ``bisection: state``) per match."""
    details: tuple[str, ...]
    """One line per matched arm (its arm-level summary), or the bisection's claim."""
    warning: str | None
    """Why a ``significant`` gate could not have fired here; None when it could."""
    run_dir: Path | None

    @property
    def passed(self) -> bool:
        """No state matched and the sweep (or bisection) completed."""
        return not self.hits and self.status == "complete"


def gate_states(states: str | Iterable[str]) -> tuple[str, ...]:
    """``states`` checked against :data:`GATE_STATES` (one string is one state).

    Raises:
        ConfigError: an unknown state (the known ones listed), or none at all.
    """
    given: object = states  # from Python callers, anything
    if not isinstance(given, str | Iterable):
        msg = (
            f"fail_on takes a state or a list of states, got {type(given).__name__} "
            f"{given!r}; choose from {', '.join(GATE_STATES)}"
        )
        raise ConfigError(msg, field="fail_on")
    wanted = (states,) if isinstance(states, str) else tuple(states)
    unknown = [s for s in wanted if s not in GATE_STATES]
    if unknown:
        msg = f"unknown state {unknown[0]!r}; choose from {', '.join(GATE_STATES)}"
        raise ConfigError(msg, field="fail_on")
    if not wanted:
        msg = f"no state to fail on; give at least one of {', '.join(GATE_STATES)}"
        raise ConfigError(msg, field="fail_on")
    return wanted


def read_result(result: SweepResult | BisectResult, states: Iterable[str]) -> GateReading:
    """The gate over a result :func:`counterfact.run_sweep` / ``run_bisect`` returned.

    Raises:
        TypeError: ``result`` is neither (``assert_no_regression(12345)``).
    """
    wanted = gate_states(states)
    if isinstance(result, BisectResult):
        return _bisect(result.record, wanted, result.run_dir)
    given: object = result  # from Python callers, anything
    if not isinstance(given, SweepResult):
        msg = (
            f"the gate reads a SweepResult, a BisectResult or a run directory's path, "
            f"got {type(given).__name__} {str(given)[:80]!r}"
        )
        raise TypeError(msg)
    return _sweep(result.summary, result.rows, wanted, result.run_dir)


def read_run_dir(run_dir: str | Path, states: Iterable[str]) -> GateReading:
    """The gate over the records in ``run_dir`` (a sweep's or a bisection's).

    Raises:
        RunDirectoryError: no records there, a damaged record, or neither ``summary.json`` nor
            ``bisect.json`` (the sweep has not finished).
    """
    wanted = gate_states(states)
    folder = Path(run_dir)
    require_records(folder)
    summary = summary_of(folder)
    if summary is not None:
        return _sweep(summary, verdicts_of(folder), wanted, folder)
    bisect = bisect_of(folder)
    if bisect is not None:
        return _bisect(bisect, wanted, folder)
    msg = (
        f"{str(folder)!r} holds runs but no summary.json or bisect.json: the sweep has not "
        "finished; run the same command again to resume it, then gate"
    )
    raise RunDirectoryError(msg, run_dir=folder)


def _sweep(
    summary: SweepSummary,
    rows: Iterable[VerdictRecord],
    states: tuple[str, ...],
    run_dir: Path | None,
) -> GateReading:
    rows = list(rows)
    hits = sweep_hits(rows, summary.arms, states)
    matched = {hit.arm for hit in hits if hit.arm is not None}
    return GateReading(
        what=f"sweep {summary.name!r}",
        status=summary.execution.status,
        states=states,
        hits=tuple(str(hit) for hit in hits),
        details=tuple(_arm_lines(summary.arms, matched)),
        warning=cannot_fire(rows, summary.arms, states, summary.statistics),
        run_dir=run_dir,
    )


def _arm_lines(arms: Iterable[ArmVerdictRecord], matched: set[str]) -> list[str]:
    return [a.summary for a in arms if a.arm in matched]


def _bisect(record: BisectRecord, states: tuple[str, ...], run_dir: Path | None) -> GateReading:
    hits = bisect_hits(record, states)
    return GateReading(
        what=f"bisection {record.name!r}",
        status=record.execution.status,
        states=states,
        hits=tuple(str(hit) for hit in hits),
        details=(record.claim,) if hits else (),
        warning=None,
        run_dir=run_dir,
    )
