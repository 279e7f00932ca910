"""A model judge of the chat runner's endpoint while the runs run on Ray: the runs' slots live in
the worker processes, so the judge is paced by its own limit, and the record and the console say
so plainly (``judges[].pacing``), against the loopback stand-in through the real ``openai``
client.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from counterfact import compare_arms
from counterfact.verdicts.report.judgenote import judge_notes

from ....standin import StandIn

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("ray_instance")]


def _answer(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    return "SAME" if "Answer to grade:" in str(messages[-1]["content"]) else "Paris, I think."


def test_a_judge_beside_runs_on_ray_says_its_calls_were_paced_apart(tmp_path: Path) -> None:
    # the workers started with the session's Ray, before any test set a key: read one every
    # process has (the stand-in takes any key); the judge reads the same one, so it is the
    # runner's endpoint with the runner's key
    with StandIn(median_s=0.005, p95_s=0.01, answer=_answer) as api:
        result = compare_arms(
            [{"id": "base"}, {"id": "alt", "facets": {"system": "Answer briefly."}}],
            {
                "kind": "chat",
                "base_url": api.base_url,
                "model": "m",
                "prompt": "{question}",
                "api_key_env": "PATH",
            },
            samples=4,
            scenarios=[{"id": "q", "inputs": {"question": "Capital?"}, "reference": "Paris."}],
            comparator={
                "kind": "judge",
                "model": "judge-model",
                "base_url": api.base_url,
                "api_key_env": "PATH",
                "recheck": 0,
            },
            executor={"kind": "ray", "concurrency": 4},
            out=tmp_path / "o",
        )
    (judge,) = result.summary.judges or []
    assert judge.calls == 1 and judge.pacing == "own-beside-runs"
    notes = judge_notes(result.summary.judges, result.rows)
    assert any("paced apart from the runs'" in n and "on Ray" in n for n in notes), notes
