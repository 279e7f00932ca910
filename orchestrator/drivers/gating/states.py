"""``--fail-on``: which challengers (or which bisection) ended in a state a CI job fails on.

The plain states (``confirmed``, ``significant``, ``inconclusive``, ``underpowered``, and
``breaks`` / ``fixes``: confirmed with the arm flipping more / less often than the baseline, so
a two-sided gate can fail on breaks and let a fix through) read the arm-level verdicts, one per
challenger over the whole question set; ``scenario-<state>`` reads the per-question rows
instead (opt in: at a few seeds no single question can be significant).

Light at import (the statistics load inside the functions that need them): the CLI's
``--fail-on`` option reads :data:`GATE_STATES` from here, and ``counterfact --version`` must not
load scipy.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from counterfact.defaults import ALPHA

if TYPE_CHECKING:
    from counterfact.records.arms import ArmVerdictRecord
    from counterfact.records.summary import StatisticsRecord
    from counterfact.records.verdicts import VerdictRecord

ARM_STATES = ("confirmed", "significant", "inconclusive", "underpowered", "breaks", "fixes")
"""What ``--fail-on`` matches on an arm-level verdict: its verdict or its statistical verdict,
or (``breaks`` / ``fixes``) a confirmed verdict's direction."""
SCENARIO_PREFIX = "scenario-"
GATE_STATES = ARM_STATES + tuple(SCENARIO_PREFIX + s for s in ARM_STATES)
"""Every ``--fail-on`` state: arm-level, then per-question (``scenario-significant``)."""


@dataclass(frozen=True)
class Hit:
    """One match of ``--fail-on``: where (an arm, ``scenario/arm`` or ``bisection``) and the state;
    ``str()`` is the ``where: state`` line the CLI prints.
    """

    where: str
    state: str
    arm: str | None = None
    """The challenger an arm-level match names (None for a row's or a bisection's)."""

    def __str__(self) -> str:
        return f"{self.where}: {self.state}"


def _split(states: Iterable[str]) -> tuple[set[str], set[str]]:
    wanted = set(states)
    arm = wanted & set(ARM_STATES)
    row = {s.removeprefix(SCENARIO_PREFIX) for s in wanted if s.startswith(SCENARIO_PREFIX)}
    return arm, row


def sweep_hits(
    rows: Sequence[VerdictRecord], arms: Sequence[ArmVerdictRecord], states: Iterable[str]
) -> list[Hit]:
    """``arm: state`` for every arm-level verdict in a plain state, then ``scenario/arm:
    scenario-state`` for every challenger row in a ``scenario-`` state.
    """
    arm_states, row_states = _split(states)
    hits = []
    for record in arms:
        said = {str(record.verdict), str(record.statistical_verdict)}
        said |= _direction(record.verdict, record.statistic)
        hits += [Hit(record.arm, state, record.arm) for state in sorted(said & arm_states)]
    for row in rows:
        if row.is_baseline:
            continue
        moved = row.test.n10 - row.test.n01 if row.test is not None else 0
        said = {str(row.verdict), str(row.statistical_verdict)} | _direction(row.verdict, moved)
        found = said & row_states
        where = f"{row.scenario}/{row.arm}"
        hits += [Hit(where, SCENARIO_PREFIX + state) for state in sorted(found)]
    return hits


def _direction(verdict: str | None, moved: int) -> set[str]:
    """``breaks`` or ``fixes`` for a confirmed verdict whose arm flipped more or less often."""
    if verdict != "confirmed" or moved == 0:
        return set()
    return {"breaks" if moved > 0 else "fixes"}


class Concluded(Protocol):
    """What a bisection's gate reads: its verdict and reason (``bisect.json``, a
    ``blame.jsonl`` line).
    """

    @property
    def verdict(self) -> str | None:
        """The verdict."""

    @property
    def reason(self) -> str | None:
        """Why."""


def bisect_hits(record: Concluded, states: Iterable[str]) -> list[Hit]:
    """``bisection: verdict`` when the bisection's verdict is one of ``states`` (plain or with
    the ``scenario-`` prefix: a bisection has one verdict, over its one scenario).
    """
    arm_states, row_states = _split(states)
    wanted = arm_states | row_states
    found = {str(record.verdict)} | ({"underpowered"} if record.reason == "underpowered" else set())
    return [Hit("bisection", state) for state in sorted(found & wanted)]


def cannot_fire(
    rows: Sequence[VerdictRecord],
    arms: Sequence[ArmVerdictRecord],
    states: Iterable[str],
    stats: StatisticsRecord | None,
) -> str | None:
    """Why a ``significant`` gate could not have fired on this sweep, in one line; None when it
    could (or no ``significant`` state was asked for).

    A gate that can never fire passes silently otherwise: every test underpowered (too few
    questions, or samples, for alpha once adjusted), or no test at all.
    """
    arm_states, row_states = _split(states)
    if "significant" in arm_states:
        if len({r.scenario for r in rows}) == 1:  # one question: its rows are the arms
            line = _rows_cannot(rows, stats, "significant")
        else:
            line = _arms_cannot(arms, stats.alpha if stats is not None else ALPHA)
        if line is not None:
            return line
    if "significant" in row_states:
        return _rows_cannot(rows, stats, "scenario-significant")
    return None


def _arms_cannot(arms: Sequence[ArmVerdictRecord], alpha: float) -> str | None:
    if not arms:
        return "fail-on significant: this gate could not fire — the sweep has no challenger"
    if any(a.statistical_verdict in ("significant", "not-significant") for a in arms):
        return None
    untested = sum(a.statistical_verdict is None for a in arms)
    parts = []
    if len(arms) - untested:
        most = max(a.questions for a in arms)
        tested = len(arms) - untested
        need = _questions_needed(arms, alpha)
        parts.append(
            f"{tested} of {len(arms)} challengers are underpowered ({most} question(s): no "
            f"outcome over so few questions can reach alpha once adjusted; {need} questions can)"
        )
    if untested:
        parts.append(f"{untested} challenger(s) have no test (no reference, or withheld)")
    return "fail-on significant: this gate could not fire — " + "; ".join(parts)


def _questions_needed(arms: Sequence[ArmVerdictRecord], alpha: float) -> int:
    """The fewest questions at which the adjusted test over questions can reach alpha: the
    smallest p over Q questions is ``(1/2)^Q`` (twice that two-sided), times the adjustment's
    best factor over the tested challengers.
    """
    from counterfact.verdicts.stats.clustered import floor_over
    from counterfact.verdicts.stats.multiplicity import best_factor
    from counterfact.verdicts.stats.significance import at_most

    first = next(a for a in arms if a.adjustment is not None)
    assert first.adjustment is not None
    factor = best_factor(first.adjustment.method, first.adjustment.family_size)
    q = 1
    while not at_most(factor * floor_over(q, first.alternative), alpha):
        q += 1
    return q


def _rows_cannot(
    rows: Sequence[VerdictRecord], stats: StatisticsRecord | None, state: str
) -> str | None:
    from counterfact.verdicts.family import samples_needed

    challengers = [r for r in rows if not r.is_baseline]
    if not challengers:
        return f"fail-on {state}: this gate could not fire — the sweep has no challenger"
    tests = [r.test for r in challengers if r.test is not None]
    if any(r.statistical_verdict in ("significant", "not-significant") for r in challengers):
        return None
    untested = len(challengers) - len(tests)
    parts = []
    if tests:
        line = f"{len(tests)} of {len(challengers)} challenger tests are underpowered"
        if stats is not None:
            need = max(samples_needed(t, stats.alpha, stats.adjust) for t in tests)
            line += f" (at least {need} samples per arm can reach alpha {stats.alpha:g})"
        parts.append(line)
    if untested:
        parts.append(f"{untested} challenger row(s) have no test (no reference, or withheld)")
    return f"fail-on {state}: this gate could not fire — " + "; ".join(parts)
