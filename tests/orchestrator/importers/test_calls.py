"""Recorded calls read as data (:mod:`counterfact.orchestrator.importers.calls`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from counterfact.exceptions import ConfigError
from counterfact.orchestrator.importers.calls import read_calls

BODY = {"model": "m", "messages": [{"role": "user", "content": "Q?"}]}


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_a_bare_request_has_no_answer(tmp_path: Path) -> None:
    (call,) = read_calls(_write(tmp_path / "c1.json", BODY))
    assert call.id == "c1" and call.answer is None and call.request["model"] == "m"


def test_a_record_keeps_its_answer(tmp_path: Path) -> None:
    reply = {"choices": [{"message": {"role": "assistant", "content": "A."}}]}
    data = {"request": BODY, "response": reply, "status": 200}
    (call,) = read_calls(_write(tmp_path / "c.json", data))
    assert call.answer == "A."


def test_a_folder_and_a_jsonl_are_many_calls_in_name_order(tmp_path: Path) -> None:
    _write(tmp_path / "000002.json", BODY)
    _write(tmp_path / "000001.json", BODY)
    (tmp_path / "more.jsonl").write_text(json.dumps(BODY) + "\n\n" + json.dumps(BODY) + "\n")
    assert [c.id for c in read_calls(tmp_path)] == ["000001", "000002", "more:1", "more:3"]
    assert [c.id for c in read_calls(tmp_path, span="more:3")] == ["more:3"]


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"messages": "x"}, "needs a 'messages' list"),
        ({"request": BODY, "status": 429}, "status 429"),
        ({"request": BODY, "response": {"choices": []}}, r"no choices\[0\]\.message\.content"),
        ({"model": "m", "messages": [{"role": "system", "content": "x"}]}, "no user message"),
    ],
)
def test_a_file_that_is_no_call_is_refused(tmp_path: Path, data: object, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        read_calls(_write(tmp_path / "c.json", data))


def test_hostile_files_are_refused_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="not a regular file"):
        read_calls(fifo)
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ConfigError, match=r"deep\.json"):
        read_calls(tmp_path / "deep.json")
    with pytest.raises(ConfigError, match="no such file"):
        read_calls(tmp_path / "absent.json")


def test_an_unknown_span_lists_the_calls(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"--span: no call is named 'x'.*its calls: c"):
        read_calls(_write(tmp_path / "c.json", BODY), span="x")


def test_otlp_messages_become_chat_messages_with_tools_intact(tmp_path: Path) -> None:
    inputs = [
        {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
        {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": "c1", "name": "w", "arguments": {"c": "P"}}],
        },
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "rain"}]},
    ]
    attrs = [
        {"key": "gen_ai.request.model", "value": {"stringValue": "m"}},
        {"key": "gen_ai.request.max_tokens", "value": {"intValue": "50"}},
        {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(inputs)}},
    ]
    export = {
        "resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "s1", "attributes": attrs}]}]}]
    }
    (call,) = read_calls(_write(tmp_path / "t.json", export))
    messages = call.request["messages"]
    assert call.id == "s1" and call.request["max_tokens"] == 50 and call.answer is None
    assert messages[1]["tool_calls"][0]["function"] == {"name": "w", "arguments": '{"c": "P"}'}
    assert messages[2] == {"role": "tool", "tool_call_id": "c1", "content": "rain"}


def test_a_malformed_span_is_one_line(tmp_path: Path) -> None:
    attrs = [
        {"key": "gen_ai.request.max_tokens", "value": {"intValue": "many"}},
        {"key": "gen_ai.input.messages", "value": {"stringValue": "[]"}},
    ]
    export = {
        "resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "s9", "attributes": attrs}]}]}]
    }
    with pytest.raises(ConfigError, match=r"span s9: malformed GenAI attributes \(ValueError"):
        read_calls(_write(tmp_path / "t.json", export))


def test_structured_otlp_messages_are_read_too(tmp_path: Path) -> None:
    def kv(**items: object) -> dict[str, object]:
        return {"kvlistValue": {"values": [{"key": k, "value": v} for k, v in items.items()]}}

    part = kv(type={"stringValue": "text"}, content={"stringValue": "Q?"})
    message = kv(role={"stringValue": "user"}, parts={"arrayValue": {"values": [part]}})
    attrs = [
        {"key": "gen_ai.request.model", "value": {"stringValue": "m"}},
        {"key": "gen_ai.input.messages", "value": {"arrayValue": {"values": [message]}}},
    ]
    export = {
        "resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "s1", "attributes": attrs}]}]}]
    }
    (call,) = read_calls(_write(tmp_path / "t.json", export))
    assert call.request["messages"] == [{"role": "user", "content": "Q?"}]
