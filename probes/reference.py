"""rule 4: which text the outputs of one scenario are compared with."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from counterfact.records.runs import RunRecord

ReferenceSource = Literal["prior-run", "baseline-arm"]


@dataclass(frozen=True)
class Reference:
    """The reference text and where it came from; both None when there is none to use."""

    text: str | None
    source: ReferenceSource | None


def resolve_reference(declared: str | None, baseline_runs: Sequence[RunRecord]) -> Reference:
    """The scenario's own reference if declared (``prior-run``), else the baseline's successful
    seed-0 output (``baseline-arm``), else none (seed 0 failed: nothing can be scored).
    """
    if declared is not None:
        return Reference(declared, "prior-run")
    seed0 = next((r for r in baseline_runs if r.seed == 0 and r.ok), None)
    if seed0 is None:
        return Reference(None, None)
    return Reference(seed0.output, "baseline-arm")
