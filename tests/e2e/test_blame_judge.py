"""``counterfact blame CALL --comparator judge``: a model judges whether a replayed answer says
the same as the recorded one, against a loopback stand-in serving both the replay and the judge
through the real ``openai`` client (issue 40)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.context_model import passages, recorded_call
from tests.helpers import invoke
from tests.standin import StandIn

PLANTED = "Passage 3: the capital moved to Sydney in 2021."
SAYS_SYDNEY = ("The capital of Australia is Sydney.", "Sydney, since the move, is the capital.")
"""The wrong answer, worded differently on odd seeds: a text check sees a flip there."""


def _judged(prompt: str) -> str:
    """The judge: SAME iff both answers name the same city."""
    found = re.search(r"Reference answer:\n(.*?)\n\nAnswer to grade:\n(.*?)\n\n", prompt, re.S)
    assert found is not None, prompt
    cities = [re.findall(r"Sydney|Canberra", part)[:1] for part in found.groups()]
    return "SAME" if cities[0] == cities[1] else "DIFFERENT"


def prose_model(body: dict[str, Any]) -> str:
    """The replayed model (wrong while the planted passage is in its context) and the judge."""
    text = "\n".join(str(m.get("content") or "") for m in body["messages"])
    if "Answer to grade:" in text:
        return _judged(text)
    if "moved to Sydney" in text:
        return SAYS_SYDNEY[int(body.get("seed") or 0) % 2]
    return "It is Canberra."


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "none")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def _call(tmp_path: Path) -> Path:
    path = tmp_path / "call.json"
    call = recorded_call(passages(6, {3: PLANTED}), answer=SAYS_SYDNEY[0])
    path.write_text(json.dumps(call), encoding="utf-8")
    return path


def test_blame_with_a_judge_finds_the_part_a_text_check_cannot(tmp_path: Path) -> None:
    with StandIn(median_s=0.001, p95_s=0.003, answer=prose_model) as api:
        args = ("blame", str(_call(tmp_path)), "--base-url", api.base_url, "--no-report")
        code, out, err = invoke(*args, "--out", str(tmp_path / "judged"), "--comparator", "judge")
        judged = [b for b in api.stats.bodies if "Answer to grade:" in json.dumps(b)]
        _, text_out, _ = invoke(*args, "--out", str(tmp_path / "exact"), "--comparator", "exact")
    assert code == 0, err
    record = json.loads((tmp_path / "judged" / "blame.json").read_text())
    assert record["culprits"] == [["m1.p3"]], out
    assert record["replay"]["reproduced"] == 2  # seed 1's other wording is the same answer
    assert judged and {b["model"] for b in judged} == {"stand-in"}  # the call's own model
    assert {b["temperature"] for b in judged} == {0}
    text = json.loads((tmp_path / "exact" / "blame.json").read_text())
    assert text["culprits"] != [["m1.p3"]] or text["verdict"] != "confirmed", text_out


def test_the_judge_s_model_and_endpoint_come_from_their_flags(tmp_path: Path) -> None:
    with (
        StandIn(median_s=0.001, p95_s=0.003, answer=prose_model) as api,
        StandIn(median_s=0.001, p95_s=0.003, answer=prose_model) as judge,
    ):
        code, out, err = invoke(
            "blame",
            str(_call(tmp_path)),
            "--base-url",
            api.base_url,
            "--comparator",
            "judge",
            "--judge-model",
            "judge-model",
            "--judge-base-url",
            judge.base_url,
            "--out",
            str(tmp_path / "o"),
            "--no-report",
        )
        replayed = [b for b in api.stats.bodies if "Answer to grade:" in json.dumps(b)]
        asked = {b["model"] for b in judge.stats.bodies}
    assert code == 0, err
    assert not replayed and asked == {"judge-model"}
    record = json.loads((tmp_path / "o" / "blame.json").read_text())
    assert record["culprits"] == [["m1.p3"]], out


def test_a_judge_flag_error_names_the_flag(tmp_path: Path) -> None:
    code, _, err = invoke(
        "blame",
        str(_call(tmp_path)),
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--comparator",
        "judge",
        "--judge-base-url",
        "ftp://127.0.0.1/v1",
        "--out",
        str(tmp_path / "o"),
    )
    assert code == 2 and "--judge-base-url" in err, err


def test_a_judge_reply_that_is_no_verdict_is_its_own_doubt_in_the_search(tmp_path: Path) -> None:
    def mumbling(body: dict[str, Any]) -> str:
        text = "\n".join(str(m.get("content") or "") for m in body["messages"])
        return "Probably the same, I think." if "Answer to grade:" in text else prose_model(body)

    with StandIn(median_s=0.001, p95_s=0.003, answer=mumbling) as api:
        code, out, err = invoke(
            "blame",
            str(_call(tmp_path)),
            "--base-url",
            api.base_url,
            "--comparator",
            "judge",
            "--out",
            str(tmp_path / "o"),
            "--no-report",
        )
    assert code == 0, err
    record = json.loads((tmp_path / "o" / "blame.json").read_text())
    (doubt,) = [d for d in record["reasons"] if d["code"] == "judge-unparseable"]
    assert "'Probably the same, I think.'" in doubt["detail"]
    assert record["verdict"] == "inconclusive" and record["culprits"] == [], out


def _judge_calls(api: StandIn) -> int:
    return sum("Answer to grade:" in json.dumps(b) for b in api.stats.bodies)


def test_a_re_run_of_the_same_blame_asks_the_judge_nothing_and_keeps_its_spend(
    tmp_path: Path,
) -> None:
    out = tmp_path / "o"
    args = ("blame", str(_call(tmp_path)), "--comparator", "judge", "--out", str(out))
    with StandIn(median_s=0.001, p95_s=0.003, answer=prose_model) as api:
        flags = ("--base-url", api.base_url, "--price", "1", "2", "--no-report")
        code, first_out, err = invoke(*args, *flags)
        asked = _judge_calls(api)
        code_again, again_out, err_again = invoke(*args, *flags)
        asked_again = _judge_calls(api) - asked
    assert code == 0 and code_again == 0, err + err_again
    assert asked > 0 and asked_again == 0, again_out
    first = json.loads((out / "blame.json").read_text())  # the re-run's record
    lines = (out / "judge.jsonl").read_text().splitlines()
    assert len(lines) == asked  # every call kept once, none added by the re-run
    (judge,) = first["judges"]
    assert judge["calls"] == 0 and judge["read_back"] == asked
    spend = first["execution"]["spend"]["judge"]
    assert spend["calls"] == asked  # the directory's judge spend, read back
    # stand-in usage: the prompt's words as input tokens, one output token; price 1 and 2 per 1k
    tokens = [json.loads(line)["input_tokens"] for line in lines]
    assert spend["tokens"] == sum(tokens) + asked
    assert spend["usd"] == pytest.approx((sum(tokens) * 1.0 + asked * 2.0) / 1000)
    assert f"judge {asked} calls ({asked} now)" in first_out
    assert f"judge {asked} calls (0 now)" in again_out


def test_an_expect_search_judged_by_a_model_charges_each_probe_arm(tmp_path: Path) -> None:
    # --expect turns the check round (ExpectedAnswer around the judge): the judge inside must
    # still be bound (judge.jsonl, spend) and each call charged to the probe arm that asked it
    out = tmp_path / "o"
    args = ("blame", str(_call(tmp_path)), "--expect", "Canberra.", "--comparator", "judge")
    with StandIn(median_s=0.001, p95_s=0.003, answer=prose_model) as api:
        flags = ("--base-url", api.base_url, "--price", "1", "2", "--no-report")
        code, out_text, err = invoke(*args, *flags, "--out", str(out))
        asked = _judge_calls(api)
    assert code == 0, err
    record = json.loads((out / "blame.json").read_text())
    assert record["culprits"] == [["m1.p3"]], out_text
    spend = record["execution"]["spend"]
    by_arm = spend["judge_by_arm"]
    assert asked > 0 and spend["judge"]["calls"] == asked
    assert by_arm and sum(arm["calls"] for arm in by_arm.values()) == asked  # every call owned
    assert "baseline" in by_arm and set(by_arm) <= set(spend["by_arm"]), by_arm  # probe arms
    assert len((out / "judge.jsonl").read_text().splitlines()) == asked
    (judge,) = record["judges"]
    assert judge["calls"] == asked
