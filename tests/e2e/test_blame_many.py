"""``counterfact blame DIR``: one budget and one rate controller over every call, against a
loopback stand-in model through the real ``openai`` client (issue 38 item 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from counterfact.exceptions import ConfigError
from counterfact.orchestrator.importers.blame import BlameOptions, blame_plan
from counterfact.orchestrator.importers.blame_share import Shared, parse_budget
from counterfact.orchestrator.importers.recorded import RecordedCall
from tests.context_model import (
    MARK,
    WRONG,
    blame_lines,
    call_folder,
    context_model,
    passages,
    recorded_call,
)
from tests.helpers import invoke
from tests.standin import StandIn


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "none")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def test_the_budget_stops_starting_calls_and_a_raised_one_resumes(tmp_path: Path) -> None:
    """6 calls of about 12 model calls each, 2 at once, runs=15: the first calls start on trust,
    then none fits (spent + in flight + one more, at the mean per call, passes 15); exit 4 says
    how to go on. Run again with more: the calls blamed are read back, the rest are blamed."""
    calls, out = call_folder(tmp_path / "calls", 6), tmp_path / "out"
    with StandIn(median_s=0.001, p95_s=0.003, answer=context_model([MARK])) as api:
        args = ["blame", str(calls), "--base-url", api.base_url, "--out", str(out)]
        code, _, err = invoke(*args, "--no-report", "--concurrency", "2", "--budget", "runs=15")
        assert code == 4, err
        assert "budget reached: runs" in err and "--budget runs=<more>" in err
        assert "run the same command again" in err
        lines = blame_lines(out)
        blamed = [x for x in lines if x["verdict"] == "confirmed"]
        assert 1 <= len(blamed) <= 2 and len(lines) == 6
        assert all(x["error"] == "not run (budget reached)" for x in lines if x not in blamed)
        spent = api.stats.served
        code, _, err = invoke(*args, "--no-report", "--budget", "runs=1000")
        assert code == 0, err
    assert [x["culprits"] for x in blame_lines(out)] == [[[f"m1.p{i}"]] for i in range(6)]
    for x in blamed:  # read back: nothing of theirs was sent again
        record = json.loads((out / str(x["record"])).read_text())
        assert (
            record["execution"]["runs_used"] == 0
            and record["execution"]["runs_reused"] == (x["execution"]["runs_used"])
        )
    assert api.stats.served - spent == sum(
        int(x["execution"]["runs_used"])
        for x in blame_lines(out)
        if x not in blamed and x["execution"]
    )


def test_calls_share_one_rate_controller_each_taking_its_part() -> None:
    shared = Shared(4)
    call = RecordedCall("c", recorded_call(passages(4, {1: MARK}))["request"], WRONG, "t")
    plan = blame_plan(call, BlameOptions(base_url="http://127.0.0.1:9/v1"))
    first, second = shared.executor(plan), shared.executor(plan)
    try:
        assert first.throttle is second.throttle is shared.throttle  # type: ignore[attr-defined]
        assert (first.share, second.share) == ((0, 4), (1, 4))  # type: ignore[attr-defined]
    finally:
        first.close()
        second.close()


def test_an_api_that_holds_few_calls_is_met_by_the_command_as_a_whole(tmp_path: Path) -> None:
    """The stand-in refuses (HTTP 429) every call beyond 3 in flight: the calls' one controller
    steps down, the refused calls wait and run again, and every call is blamed."""
    calls, out = call_folder(tmp_path / "calls", 8), tmp_path / "out"
    with StandIn(
        median_s=0.01, p95_s=0.02, max_in_flight=3, retry_after=0.05, answer=context_model([MARK])
    ) as api:
        code, _, err = invoke(
            "blame", str(calls), "--base-url", api.base_url, "--out", str(out), "--no-report"
        )
    assert code == 0, err
    assert [x["culprits"] for x in blame_lines(out)] == [[[f"m1.p{i % 6}"]] for i in range(8)]
    assert api.stats.refused > 0


@pytest.mark.parametrize("given", ["runs", "runs=", "tokens=5", "usd=-1", "runs=lots"])
def test_a_bad_budget_is_one_line_naming_the_flag(given: str) -> None:
    with pytest.raises(ConfigError, match="--budget takes KEY=NUMBER"):
        parse_budget((given,))
