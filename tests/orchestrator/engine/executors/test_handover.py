"""What a Ray task carries: the runs of a batch, compactly, and back their records as lines."""

from __future__ import annotations

import pickle

from counterfact.orchestrator.engine.calling.worker import RetryPolicy, execute_run
from counterfact.orchestrator.engine.executors.handover import decode, encode, run_shipment, ship
from counterfact.orchestrator.storage.writable import record_line
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


def test_a_batch_runs_in_order_and_comes_back_as_the_lines_it_is_stored_as() -> None:
    sc, arm = ScenarioView("s", {}), ArmView("a", {})
    contexts = [RunContext(sc, arm, seed) for seed in (2, 0, 1, 4)]

    def runner(ctx: RunContext) -> object:
        if ctx.seed == 1:
            raise ValueError("no")
        if ctx.seed == 4:
            return "bad \udcff byte"  # UTF-8 cannot encode it: escaped on the worker
        return {"output": f"out {ctx.seed}", "manifest": {"k": [1, 2]}, "cost": {"t": 0.1}}

    blob = run_shipment(runner, ship(contexts), RetryPolicy(), "node-1")
    back = decode(pickle.loads(pickle.dumps(blob)))
    assert [(r.seed, r.output) for r in back.records] == [
        (2, "out 2"),
        (0, "out 0"),
        (1, None),
        (4, "bad \\udcff byte"),
    ]
    assert back.records[3].text_escaped and back.records[2].error is not None
    assert back.lines == [record_line(r)[1] for r in back.records]  # as the store writes them
    assert all(r.node == "node-1" for r in back.records)


def test_a_record_read_back_from_its_line_is_the_record() -> None:
    record = execute_run(
        lambda ctx: {
            "output": "x",
            "manifest": {"a": {"b": [1.5, None, True]}},
            "cost": {"u": 1e-7},
        },
        RunContext(ScenarioView("s", {}), ArmView("a", {}), 3),
    )
    assert decode(encode([record])).records == [record]
