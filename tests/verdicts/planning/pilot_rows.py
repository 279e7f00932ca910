"""Pilot rows for the planner's tests: one challenger's verdict rows built from counts."""

from __future__ import annotations

from counterfact.records import parts
from counterfact.records.verdicts import VerdictRecord


def rows_of(cells: list[tuple[int, int, int]], pairs: int) -> list[VerdictRecord]:
    """One challenger's rows, ``(n10, n01, n11)`` a question (the fields the planner reads)."""
    return [
        VerdictRecord.model_construct(
            scenario=f"q{i}",
            arm="arm",
            is_baseline=False,
            placebo=None,
            samples_declared=pairs,
            effect=None,
            sequential=None,
            test=parts.TestRecord.model_construct(
                n10=a, n01=b, n11=c, pairs=pairs, pairs_excluded=0
            ),
        )
        for i, (a, b, c) in enumerate(cells)
    ]
