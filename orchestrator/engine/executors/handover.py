"""What one Ray task carries to its worker: its runs, compactly.

A :class:`Shipment` holds each distinct scenario and arm of the batch once, and the runs as
``(scenario, arm, seed)`` index triples. A list of :class:`RunContext` made Ray pickle every
context on its own (cloudpickle's per-object hook on each dataclass), which cost the driver more
than running an instant runner; index triples are plain tuples of ints, which Ray packs natively.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from counterfact.probes.runner import ArmView, RunContext, ScenarioView


@dataclass(frozen=True)
class Shipment:
    """A batch of runs: the views they share, once, and each run as indices into them."""

    scenarios: tuple[ScenarioView, ...]
    arms: tuple[ArmView, ...]
    runs: tuple[tuple[int, int, int], ...]
    """``(scenario index, arm index, seed)`` per run, in the batch's order."""

    def __len__(self) -> int:
        return len(self.runs)

    def contexts(self) -> list[RunContext]:
        """The batch's run contexts, in order."""
        scenarios, arms = self.scenarios, self.arms
        return [RunContext(scenarios[s], arms[a], seed) for s, a, seed in self.runs]


View = TypeVar("View", ScenarioView, ArmView)


class _Views(Generic[View]):
    """Distinct views in first-seen order: the same object, or an equal one with the same id."""

    def __init__(self) -> None:
        self.views: list[View] = []
        self._by_id: dict[str, int] = {}

    def index(self, view: View) -> int:
        found = self._by_id.get(view.id)
        if found is not None and (self.views[found] is view or self.views[found] == view):
            return found
        self._by_id[view.id] = len(self.views)
        self.views.append(view)
        return len(self.views) - 1


def ship(contexts: Sequence[RunContext]) -> Shipment:
    """The batch ``contexts`` as a :class:`Shipment` (order kept)."""
    scenarios: _Views[ScenarioView] = _Views()
    arms: _Views[ArmView] = _Views()
    runs = tuple((scenarios.index(c.scenario), arms.index(c.arm), c.seed) for c in contexts)
    return Shipment(tuple(scenarios.views), tuple(arms.views), runs)
