"""``--fail-on``: which challengers (or which bisection) ended in a state a CI job fails on."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from counterfact.records import BisectRecord, VerdictRecord
from counterfact.records.verdicts import StatisticsRecord
from counterfact.verdicts.family import samples_needed

GATE_STATES = ("confirmed", "significant", "inconclusive", "underpowered")
"""What ``--fail-on`` can match: a headline verdict, or a challenger's statistical verdict."""


def sweep_hits(rows: Sequence[VerdictRecord], states: Iterable[str]) -> list[str]:
    """``scenario/arm: state`` for every challenger row in one of ``states``."""
    wanted = set(states)
    hits = []
    for row in rows:
        if row.is_baseline:
            continue
        found = {str(row.verdict), str(row.statistical_verdict)} & wanted
        hits += [f"{row.scenario}/{row.arm}: {state}" for state in sorted(found)]
    return hits


def bisect_hits(record: BisectRecord, states: Iterable[str]) -> list[str]:
    """``bisection: verdict`` when the bisection's verdict is one of ``states``."""
    return [f"bisection: {record.verdict}"] if record.verdict in set(states) else []


def cannot_fire(
    rows: Sequence[VerdictRecord], states: Iterable[str], stats: StatisticsRecord | None
) -> str | None:
    """Why ``--fail-on significant`` could not have fired on this sweep, in one line; None when
    some challenger's test could reach significance (or ``significant`` was not asked for).

    A gate that can never fire passes silently otherwise: every test underpowered (too few
    samples for alpha once adjusted), or no test at all.
    """
    if "significant" not in set(states):
        return None
    challengers = [r for r in rows if not r.is_baseline]
    if not challengers:
        return "fail-on significant: this gate could not fire — the sweep has no challenger"
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
    return "fail-on significant: this gate could not fire — " + "; ".join(parts)
