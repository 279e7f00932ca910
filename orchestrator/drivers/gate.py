"""``--fail-on``: which challengers (or which bisection) ended in a state a CI job fails on."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from counterfact.records import BisectRecord, VerdictRecord


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
