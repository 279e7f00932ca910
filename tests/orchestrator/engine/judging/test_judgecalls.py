"""The model judge's calls against a loopback stand-in with the real ``openai`` client: a judge
that refuses or stays down leaves its outputs unscored (``judge-unavailable``), its 429s slow it
down through the project's rate control and are retried, and its connections are closed however
the sweep ends.
"""

from __future__ import annotations

import _thread
import time
from pathlib import Path
from typing import Any

import pytest

from counterfact import compare_arms
from counterfact.exceptions import ScoringError, SweepInterrupted
from counterfact.orchestrator.drivers.outputs.report import write_report
from counterfact.orchestrator.engine.judging.judge import DEFAULT_PROMPT, JudgeSettings, ModelJudge

from ....standin import StandIn
from .test_judge import ARMS, _judge, _sweep, distinct_prose, judge_reply


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_KEY", "none")


def _graded(body: dict[str, Any]) -> str:
    """The answer the judge is asked to grade."""
    prompt = str(body["messages"][-1]["content"])
    return prompt.split("Answer to grade:\n", 1)[1].split("\n\n", 1)[0]


def _closed(api: StandIn, within_s: float = 5.0) -> bool:
    """The server holds no connection open (a closed client's go within a moment)."""
    deadline = time.monotonic() + within_s
    while api.open_connections and time.monotonic() < deadline:
        time.sleep(0.02)
    return api.open_connections == 0


def test_a_refused_output_is_unscored_as_judge_unavailable_and_a_resume_asks_again(
    tmp_path: Path,
) -> None:
    refusing = [True]

    def refuse_wrong(body: dict[str, Any]) -> int | None:
        wrong = "not Canberra" in _graded(body)
        return 400 if refusing[0] and wrong else None  # a content filter's refusal

    with StandIn(median_s=0.001, p95_s=0.002, answer=judge_reply, status=refuse_wrong) as api:
        result = _sweep(tmp_path / "o", _judge(api.base_url))
        base, alt = result.row("base"), result.row("alt")
        assert base.flips == 0 and alt.flips == 0 and alt.verdict == "inconclusive"
        (doubt,) = [d for d in alt.reasons if d.code == "judge-unavailable"]
        assert doubt.count == 6 and "refused it (HTTP 400)" in doubt.detail
        assert result.summary.judges is not None and result.summary.judges[0].unavailable == 1
        report = write_report(tmp_path / "o").read_text(encoding="utf-8")
        assert "<code>judge-unavailable</code>" in report  # the report lists the row's doubt
        refusing[0] = False
        (tmp_path / "o" / "summary.json").unlink()  # resume judges again from the records
        api.stats.served = 0
        again = _sweep(tmp_path / "o", _judge(api.base_url))
        assert api.stats.served == 1  # only the refused judgment: the other was kept
    assert again.row("alt").flips == 6


def test_a_judge_that_stays_down_leaves_its_outputs_unscored_after_its_retries() -> None:
    with StandIn(median_s=0.001, p95_s=0.002, status=lambda body: 503) as api:
        result = _sweep(None, _judge(api.base_url), samples=2)
        received = api.stats.received
    assert received == 2 * 3  # two distinct outputs, three attempts each
    (doubt,) = [d for d in result.row("alt").reasons if d.code == "judge-unavailable"]
    assert "gave no answer after 3 attempt(s)" in doubt.detail


def test_judge_429s_cut_its_concurrency_and_are_retried_until_answered(tmp_path: Path) -> None:
    with StandIn(
        median_s=0.05, p95_s=0.08, max_in_flight=2, retry_after=0.02, answer=judge_reply
    ) as api:
        result = compare_arms(
            [ARMS[0], {"id": "alt", "facets": {"says": "again"}}],
            distinct_prose,
            samples=20,
            reference="Canberra.",
            comparator=_judge(api.base_url),
            executor="local",
            out=tmp_path / "o",
            runner_version="distinct-1",
        )
        refused, served, peak = api.stats.refused, api.stats.served, api.stats.peak_in_flight
    assert refused > 0 and served == 20  # 20 distinct outputs, each answered once in the end
    assert peak <= 2
    (judge,) = result.summary.judges or []
    assert judge.rate_limited == refused and judge.unavailable == 0
    assert judge.concurrency is not None and judge.concurrency.cuts >= 1
    assert judge.concurrency.lowest < judge.concurrency.configured == 8
    assert not [d for d in result.row("alt").reasons if d.code.startswith("judge-")]


def _settings(base_url: str) -> JudgeSettings:
    return JudgeSettings(
        model="judge-model",
        base_url=base_url,
        api_key_env="JUDGE_KEY",
        rubric=None,
        prompt=DEFAULT_PROMPT,
        seed=0,
        recheck=0.0,
        price=None,
    )


def test_closing_a_judge_closes_its_connections() -> None:
    with StandIn(median_s=0.001, p95_s=0.002, answer=judge_reply) as api:
        judge = ModelJudge(_settings(api.base_url))
        judge.bind(None, None)
        judge.prepare("Canberra.", [f"Canberra {i}" for i in range(6)])
        assert api.open_connections >= 1  # the client's pool keeps them for the next batch
        judge.close()
        assert _closed(api)
        judge.close()  # twice is harmless
        assert judge.same("Canberra.", "Canberra 0")  # kept, asked nothing


def test_the_sweep_closes_its_judges_connections_when_it_ends(tmp_path: Path) -> None:
    with StandIn(median_s=0.001, p95_s=0.002, answer=judge_reply) as api:
        _sweep(tmp_path / "o", _judge(api.base_url))
        assert api.stats.served == 2 and _closed(api)


def test_the_sweep_closes_its_judges_connections_when_judging_fails(tmp_path: Path) -> None:
    def reject_wrong(body: dict[str, Any]) -> int | None:
        return 401 if "not Canberra" in _graded(body) else None  # the key, rejected

    with StandIn(median_s=0.2, p95_s=0.3, answer=judge_reply, status=reject_wrong) as api:
        with pytest.raises(ScoringError, match="could not be asked"):
            _sweep(tmp_path / "o", _judge(api.base_url))
        assert api.stats.served == 1 and _closed(api)


def test_the_sweep_closes_its_judges_connections_when_interrupted(tmp_path: Path) -> None:
    def interrupt(body: dict[str, Any]) -> str:
        if "not Canberra" in _graded(body):
            _thread.interrupt_main()  # Ctrl-C while the judge is asked
            time.sleep(0.5)
        return judge_reply(body)

    with StandIn(median_s=0.001, p95_s=0.002, answer=interrupt) as api:
        with pytest.raises(SweepInterrupted):
            _sweep(tmp_path / "o", _judge(api.base_url))
        assert _closed(api)
