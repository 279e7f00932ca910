"""The chat runner on Ray worker actors: shipped to the workers as it is, one client per worker,
against the loopback stand-in through the real ``openai`` client.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from counterfact import compare_arms

from ...standin import StandIn

pytestmark = pytest.mark.ray


@pytest.mark.usefixtures("ray_instance")
def test_the_chat_runner_runs_on_ray_workers(tmp_path: Path) -> None:
    import ray

    with StandIn(median_s=0.05, p95_s=0.1) as api:
        runner = {
            "kind": "chat",
            "base_url": api.base_url,
            "model": "steady-model",
            "prompt": "{question}",
            # the workers started with the session's Ray, before any test set a key: read one
            # every process has (the stand-in takes any key)
            "api_key_env": "PATH",
        }
        result = compare_arms(
            [{"id": "base"}, {"id": "contrary", "facets": {"system": "Be contrary."}}],
            runner,
            samples=10,
            scenarios=[
                {"id": "q", "inputs": {"question": "Capital of France?"}, "reference": "Paris"}
            ],
            comparator="contains",
            executor={"kind": "ray", "concurrency": 10},
            out=tmp_path / "o",
        )
    runs = [json.loads(x) for x in (tmp_path / "o" / "runs.jsonl").read_text().splitlines()]
    assert len(runs) == 20 and all(r["error"] is None for r in runs)
    assert {r["node"] for r in runs} == {ray.get_runtime_context().get_node_id()}
    assert result.row("contrary").verdict == "confirmed" and result.row("contrary").flips == 10
    assert sorted(b["seed"] for b in api.stats.bodies) == sorted(list(range(10)) * 2)
