"""What a Ray task carries: the runs of a batch, compactly, and back the same runs."""

from __future__ import annotations

import pickle

from counterfact.orchestrator.engine.executors.handover import ship
from counterfact.probes.runner import ArmView, RunContext, ScenarioView


def test_a_shipment_carries_each_view_once_and_the_runs_in_order() -> None:
    scenarios = [ScenarioView(f"s{i}", {"q": f"question {i}"}) for i in range(2)]
    arms = [ArmView("base", {}), ArmView("alt", {"x": 1}), ArmView("abl", {}, ("tool",))]
    contexts = [RunContext(s, a, seed) for s in scenarios for seed in (3, 0, 7) for a in arms]
    shipment = pickle.loads(pickle.dumps(ship(contexts)))  # as a worker receives it
    assert len(shipment.scenarios) == 2 and len(shipment.arms) == 3
    assert len(shipment) == len(contexts)
    assert shipment.contexts() == contexts


def test_equal_views_made_per_run_are_shipped_once_and_unequal_ones_apart() -> None:
    # a sequential sweep makes a scenario's view per run: equal, not the same object
    same = [RunContext(ScenarioView("s", {"q": 1}), ArmView("a", {}), seed) for seed in range(4)]
    odd = RunContext(
        ScenarioView("s", {"q": 2}), ArmView("a", {"y": 1}), 9
    )  # same ids, other content
    shipment = ship([*same, odd])
    assert len(shipment.scenarios) == 2 and len(shipment.arms) == 2
    assert shipment.contexts() == [*same, odd]
