"""Scenario declarations: one fixed input the program is rerun on, with its optional reference."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from counterfact.probes.runner import ScenarioView


@dataclass(frozen=True)
class ScenarioSpec:
    """One scenario, resolved."""

    id: str
    inputs: Mapping[str, Any]
    reference: str | None
    """The answer the real run gave; None means the baseline's seed-0 output (rule 4)."""

    def view(self) -> ScenarioView:
        """The scenario as the runner sees it."""
        return ScenarioView(id=self.id, inputs=self.inputs)
