"""A model judge of the chat runner's endpoint while the runs run on Ray: the runs' slots live in
the worker processes, so the judge, in the driver, holds its part of the same limit from the same
throttle actor (``judges[].pacing: runs-slots``), against the loopback stand-in through the real
``openai`` client: the runs' and the judge's requests in flight together, counted at the server,
never pass the shared limit, and the judge's 429s are counted by the one throttle.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from counterfact import compare_arms
from counterfact.verdicts.report.judgenote import judge_notes

from ....standin import StandIn

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("ray_instance")]

QUESTIONS = [{"id": f"q{i}", "inputs": {"question": f"Capital, {i}?"}} for i in range(4)]


class Served:
    """The stand-in's answers: a different sentence each run (every output is judged), SAME from
    the judge; when each judge call and each run was served.
    """

    def __init__(self) -> None:
        self.judge_at: list[float] = []
        self.run_at: list[float] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str:
        judging = "Answer to grade:" in str(body["messages"][-1]["content"])
        with self._lock:
            (self.judge_at if judging else self.run_at).append(time.monotonic())
        if judging:
            return "SAME"
        said = " / ".join(str(m.get("content")) for m in body["messages"])
        return f"Paris, on take {body.get('seed')} of {said}"


def _sweep(api: StandIn, out: Path, samples: int, concurrency: int) -> Any:
    # the workers started with the session's Ray, before any test set a key: read one every
    # process has (the stand-in takes any key); the judge reads the same one, so it is the
    # runner's endpoint with the runner's key
    return compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"system": "Answer briefly."}}],
        {
            "kind": "chat",
            "base_url": api.base_url,
            "model": "m",
            "prompt": "{question}",
            "api_key_env": "PATH",
        },
        samples=samples,
        scenarios=[q | {"reference": "Paris."} for q in QUESTIONS],
        comparator={
            "kind": "judge",
            "model": "judge-model",
            "base_url": api.base_url,
            "api_key_env": "PATH",
            "recheck": 0,
        },
        executor={"kind": "ray", "concurrency": concurrency},
        out=out,
    )


def test_a_judge_beside_runs_on_ray_holds_a_part_of_the_runs_limit(tmp_path: Path) -> None:
    served = Served()
    with StandIn(median_s=0.04, p95_s=0.06, answer=served) as api:
        result = _sweep(api, tmp_path / "o", 12, concurrency=4)
        peak = api.stats.peak_in_flight
    (judge,) = result.summary.judges or []
    assert judge.calls == len(served.judge_at) == 4 * 2 * 12  # every output its own judgment
    # the judge judged a question while the others' runs still ran: the two overlapped ...
    assert min(served.judge_at) < max(served.run_at)
    # ... and together never passed the runs' limit of 4 (apart, the judge alone takes up to 8)
    assert peak <= 4  # measured 4 (12 with the judge paced apart)
    assert judge.pacing == "runs-slots"
    assert judge.concurrency is not None and judge.concurrency.configured == 4  # the runs'
    assert not any("paced apart" in n for n in judge_notes(result.summary.judges, result.rows))


def test_the_judge_s_429s_on_ray_go_to_the_runs_throttle(tmp_path: Path) -> None:
    served = Served()
    with StandIn(
        median_s=0.05, p95_s=0.08, max_in_flight=2, retry_after=0.02, answer=served
    ) as api:
        result = _sweep(api, tmp_path / "o", 8, concurrency=6)
        refused = api.stats.refused
    (judge,) = result.summary.judges or []
    assert judge.unavailable == 0 and judge.pacing == "runs-slots"
    assert judge.concurrency is not None and judge.concurrency.configured == 6
    # one controller, the throttle actor: every refusal, the runs' and the judge's, counted by
    # it (measured: 80 refused, 80 counted, 28 of them the judge's; which side meets them is
    # timing)
    assert judge.concurrency.refusals == refused
    assert judge.concurrency.refusals >= judge.rate_limited
    assert judge.concurrency.cuts >= 1
