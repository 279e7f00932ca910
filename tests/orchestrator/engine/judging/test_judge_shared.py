"""A model judge that calls the chat runner's own endpoint is paced by the runs' own rate
control (one throttle instance, one set of slots, one ``executor.rate_limit`` bucket), against
the loopback stand-in through the real ``openai`` client.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from counterfact import compare_arms

from ....helpers import invoke
from ....standin import StandIn

QUESTIONS = [{"id": f"q{i}", "inputs": {"question": f"Capital, {i}?"}} for i in range(3)]


class Served:
    """The stand-in's answers: the runner says Paris in a different sentence each seed (every
    output is judged), the judge says SAME; when each judge call and each run was served.
    """

    def __init__(self) -> None:
        self.judge_at: list[float] = []
        self.run_at: list[float] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str:
        prompt = str(body["messages"][-1]["content"])
        with self._lock:
            (self.judge_at if "Answer to grade:" in prompt else self.run_at).append(
                time.monotonic()
            )
        if "Answer to grade:" in prompt:
            return "SAME"
        said = " / ".join(str(m.get("content")) for m in body["messages"])
        return f"Paris, on take {body.get('seed')} of {said}"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "none")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def _sweep(
    api: StandIn,
    out: Path,
    samples: int,
    questions: list[dict[str, Any]] = QUESTIONS,
    **executor: Any,
) -> Any:
    return compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"system": "Answer briefly."}}],
        {"kind": "chat", "base_url": api.base_url, "model": "m", "prompt": "{question}"},
        samples=samples,
        scenarios=[q | {"reference": "Paris."} for q in questions],
        comparator={
            "kind": "judge",
            "model": "judge-model",
            "base_url": api.base_url,
            "recheck": 0,
        },
        executor={"kind": "local", **executor},
        out=out,
    )


def test_a_judge_of_the_runner_s_endpoint_holds_the_runs_slots(tmp_path: Path) -> None:
    served = Served()
    with StandIn(median_s=0.03, p95_s=0.05, answer=served) as api:
        result = _sweep(api, tmp_path / "o", 8, concurrency=3)
        peak = api.stats.peak_in_flight
    (judge,) = result.summary.judges or []
    assert judge.calls == len(served.judge_at) == 3 * 2 * 8  # every output its own judgment
    assert peak <= 3  # runs and judge calls together; the judge alone would take 8
    assert judge.concurrency is not None and judge.concurrency.configured == 3  # the runs'
    assert judge.pacing == "runs-slots"


def test_the_judge_s_429s_cut_the_runs_limit_too(tmp_path: Path) -> None:
    with StandIn(
        median_s=0.05, p95_s=0.08, max_in_flight=2, retry_after=0.02, answer=Served()
    ) as api:
        result = _sweep(api, tmp_path / "o", 8, concurrency=6)
        refused = api.stats.refused
    (judge,) = result.summary.judges or []
    # which side meets the storm's 429s is timing (CI under load: the runs took them all)
    assert judge.unavailable == 0
    assert judge.concurrency is not None
    # one controller: every refusal, the runs' and the judge's, counted by the same throttle
    assert judge.concurrency.refusals == refused
    assert judge.concurrency.refusals >= judge.rate_limited
    assert judge.concurrency.cuts >= 1


def test_judge_calls_obey_the_runs_requests_per_minute(tmp_path: Path) -> None:
    served = Served()
    rate = 10.0  # requests a second (600 a minute): a bucket of one second's worth, 10
    with StandIn(median_s=0.005, p95_s=0.01, answer=served) as api:
        _sweep(
            api,
            tmp_path / "o",
            15,
            questions=QUESTIONS[:1],
            concurrency=8,
            rate_limit={"requests_per_minute": rate * 60},
        )
    judged = sorted(served.judge_at)
    assert len(judged) == len(served.run_at) == 30
    assert judged[0] >= max(served.run_at)  # one question: judged once its runs are all in
    # 30 judge calls after at most a full bucket of 10: 2 s at least from first to last; the
    # judge's own throttle has no requests-per-minute cap and serves them in about 0.1 s
    assert judged[-1] - judged[0] >= (len(judged) - rate) / rate - 0.1


DISTINCT = """
def run(ctx):
    return f"Canberra, said on try {ctx.seed} by {ctx.arm.id}."
"""


def test_a_budget_only_the_judge_spends_stops_the_sweep_and_a_raised_one_loses_nothing(
    tmp_path: Path,
) -> None:
    (tmp_path / "agent.py").write_text(DISTINCT, encoding="utf-8")
    out = tmp_path / "o"
    asked: list[str] = []

    def judge(body: dict[str, Any]) -> str:
        asked.append(str(body["messages"][-1]["content"]))
        return "SAME"

    with StandIn(median_s=0.001, p95_s=0.002, answer=judge) as api:
        (tmp_path / "sweep.yaml").write_text(  # the runs report no cost: only the judge spends
            "name: judged\nrunner: agent.py:run\nexecutor: local\nsamples: 150\n"
            "reference: Canberra.\narms: [{id: base}, {id: alt, facets: {x: 1}}]\nbudget: {usd: 1.0}\n"
            f"comparator: {{kind: judge, model: judge-model, base_url: '{api.base_url}', "
            "recheck: 0, price: {input_per_1k: 1.0, output_per_1k: 2.0}}\n",
            encoding="utf-8",
        )
        run = ("run", str(tmp_path / "sweep.yaml"), "--out", str(out), "--no-report")
        code, _, err = invoke(*run)
        first_runs = len((out / "runs.jsonl").read_text().splitlines())
        summary = json.loads((out / "summary.json").read_text())
        code_again, _, err_again = invoke(*run, "--set", "budget.usd=1000")
    assert code == 4, err
    assert "budget reached: budget.usd" in err and "nothing runs twice" in err, err
    assert first_runs < 300 and summary["execution"]["status"] == "budget-exhausted"
    assert summary["execution"]["budget"]["spent"]["usd"] == pytest.approx(
        summary["execution"]["spend"]["judge"]["usd"]
    )
    assert (
        summary["execution"]["spend"]["total"] == {}
    )  # no run spent anything: the judge alone stopped it
    assert code_again == 0, err_again
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert len(runs) == 300 == len({(r["arm"], r["seed"]) for r in runs})  # none ran twice
    assert len(asked) == len(set(asked)) == 300  # every output judged once, none asked again
    assert len((out / "judge.jsonl").read_text().splitlines()) == 300
