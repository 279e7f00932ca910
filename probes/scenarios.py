"""Scenario declarations: one fixed input the program is rerun on, with its optional reference."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from counterfact.probes.comparators import Comparator, check_spec
from counterfact.probes.runner import ScenarioView


@dataclass(frozen=True)
class ScenarioSpec:
    """One scenario, resolved."""

    id: str
    inputs: Mapping[str, Any]
    reference: str | None
    """The answer the real run gave; None means the baseline's seed-0 output (rule 4)."""
    expect: Comparator | None = None
    """The question's own check (``expect:``); None: the sweep's comparator judges it."""

    def check(self, default: Comparator) -> Comparator:
        """The comparator that judges this question: its own, else ``default``."""
        return self.expect if self.expect is not None else default

    def check_label(self, default: Comparator) -> str:
        """Which check judges this question, as the records say it: its own in full
        (``numeric(tolerance=0.01)``), else ``sweep default: contains``.
        """
        if self.expect is not None:
            return check_spec(self.expect)
        return f"sweep default: {check_spec(default)}"

    def view(self) -> ScenarioView:
        """The scenario as the runner sees it."""
        return ScenarioView(id=self.id, inputs=self.inputs)
