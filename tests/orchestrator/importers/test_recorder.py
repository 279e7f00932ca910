"""``counterfact record``'s proxy: real HTTP on loopback, the real ``openai`` client through it
to the stand-in API, then ``counterfact blame`` over the folder it wrote (issue 38 item 5)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from counterfact.orchestrator.importers.recorder import Recorder, build_app
from tests.context_model import WRONG, context_model, passages, recorded_call
from tests.echo_server import echo_server, serve
from tests.helpers import invoke
from tests.standin import StandIn

SECRET = "sk-test-never-written-0123456789"


@pytest.fixture
def api() -> Iterator[StandIn]:
    with StandIn(median_s=0.001, p95_s=0.002, answer=context_model(["moved to Sydney"])) as api:
        yield api


@pytest.fixture
def proxy(api: StandIn, tmp_path: Path) -> Iterator[str]:
    app = build_app(Recorder(out=tmp_path / "calls", upstream=api.base_url))
    (tmp_path / "calls").mkdir()
    with serve(app) as root:
        yield root + "v1"


def _messages(planted: bool) -> list[dict[str, str]]:
    found = recorded_call(passages(6, {2: "Passage 2: it moved to Sydney."} if planted else {}))
    return found["request"]["messages"]


def _calls(tmp_path: Path) -> list[dict[str, object]]:
    return [json.loads(p.read_text()) for p in sorted((tmp_path / "calls").glob("*.json"))]


def test_each_call_is_one_file_in_order_and_keys_are_never_written(
    proxy: str, tmp_path: Path
) -> None:
    client = openai.OpenAI(base_url=proxy, api_key=SECRET, max_retries=0)
    first = client.chat.completions.create(model="stand-in", messages=_messages(True), seed=1)
    client.chat.completions.create(model="stand-in", messages=_messages(False), temperature=0)
    assert first.choices[0].message.content == WRONG
    assert [p.name for p in sorted((tmp_path / "calls").glob("*.json"))] == [
        "000001.json",
        "000002.json",
    ]
    one, two = _calls(tmp_path)
    assert one["status"] == 200 and one["request"]["seed"] == 1  # type: ignore[index]
    assert one["response"]["choices"][0]["message"]["content"] == WRONG  # type: ignore[index]
    assert two["request"]["temperature"] == 0  # type: ignore[index]
    written = "".join(p.read_text() for p in (tmp_path / "calls").iterdir())
    assert SECRET not in written


def test_a_streamed_reply_is_relayed_and_saved_assembled(proxy: str, tmp_path: Path) -> None:
    client = openai.OpenAI(base_url=proxy, api_key=SECRET, max_retries=0)
    chunks = client.chat.completions.create(model="stand-in", messages=_messages(True), stream=True)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == WRONG
    deadline = time.monotonic() + 10
    while not list((tmp_path / "calls").glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.05)  # the record is written once the stream has ended
    (saved,) = _calls(tmp_path)
    assert saved["response"]["choices"][0]["message"]["content"] == WRONG  # type: ignore[index]
    assert saved["response"]["object"] == "chat.completion"  # type: ignore[index]


def test_other_requests_are_forwarded_not_recorded(proxy: str, tmp_path: Path) -> None:
    client = openai.OpenAI(base_url=proxy, api_key=SECRET, max_retries=0)
    assert "stand-in" in [m.id for m in client.models.list()]
    assert _calls(tmp_path) == []


def test_record_then_blame_the_folder(
    proxy: str, api: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent's two calls, recorded, then blamed in one command: the planted passage is found
    in the call that had it; the other call's replay gives its own (right) answer, nothing to
    blame."""
    monkeypatch.setenv("OPENAI_API_KEY", "none")
    client = openai.OpenAI(base_url=proxy, api_key="none", max_retries=0)
    for planted in (True, True, False):
        client.chat.completions.create(model="stand-in", messages=_messages(planted), temperature=0)
    code, out, err = invoke(
        "blame",
        str(tmp_path / "calls"),
        "--base-url",
        api.base_url,
        "--out",
        str(tmp_path / "out"),
        "--no-report",
    )
    assert code == 0, err
    lines = [json.loads(x) for x in (tmp_path / "out" / "blame.jsonl").read_text().splitlines()]
    assert [x["call"] for x in lines] == ["000001", "000002", "000003"]
    assert lines[0]["culprits"] == [["m1.p2"]] and lines[1]["culprits"] == [["m1.p2"]]
    assert lines[2]["culprits"] == []
    assert "2 call(s): 'Passage 2: it moved to Sydney.' (as m1.p2)" in out


def test_an_upstream_error_page_is_relayed_and_recorded_as_text(tmp_path: Path) -> None:
    """A 200 proxy in front of an upstream whose gateway answers 502 in HTML: the client gets
    the 502, and the call is recorded with its status and the page's text."""
    with StandIn(median_s=0.001, p95_s=0.002, raw="<html>bad gateway</html>") as api:
        (tmp_path / "calls").mkdir()
        app = build_app(Recorder(out=tmp_path / "calls", upstream=api.base_url + "/nowhere"))
        with serve(app) as root:
            client = openai.OpenAI(base_url=root + "v1", api_key="none", max_retries=0)
            with pytest.raises(openai.NotFoundError):
                client.chat.completions.create(model="stand-in", messages=_messages(True))
    (saved,) = _calls(tmp_path)
    assert saved["status"] == 404 and "text" in saved["response"]  # type: ignore[operator]


def test_a_last_stream_line_without_a_newline_is_kept() -> None:
    """The assembled record keeps a final chunk the upstream did not end with a newline."""
    from counterfact.orchestrator.importers.recorder import _Stream

    stream = _Stream()
    for line in [
        'data: {"id": "c", "choices": [{"delta": {"content": "Can"}}]}',
        'data: {"choices": [{"delta": {"content": "berra"}, "finish_reason": "stop"}]}',
    ]:
        stream.feed(line)
    done = stream.completion()
    assert done["choices"][0]["message"]["content"] == "Canberra"
    assert done["choices"][0]["finish_reason"] == "stop" and done["id"] == "c"
    stream.feed("data: [1, 2]")  # not a chunk: skipped, never raised
    stream.feed("data: {not json")


def test_an_upstream_that_echoes_the_key_does_not_get_it_recorded(tmp_path: Path) -> None:
    """Issue 45 item 8: the proxy never wrote the Authorization header, but an upstream that
    echoed the key in its reply (text, model, id) or its error body got it into the call file."""
    (tmp_path / "calls").mkdir()
    recorder = Recorder(out=tmp_path / "calls", upstream="")
    with echo_server() as root:
        for where, failure in (("ok", None), ("error", openai.BadRequestError)):
            recorder.upstream = f"{root}{where}/v1"
            with serve(build_app(recorder)) as proxy:
                client = openai.OpenAI(base_url=proxy + "v1", api_key=SECRET, max_retries=0)
                if failure is None:
                    reply = client.chat.completions.create(model="m", messages=_messages(True))
                    assert SECRET in (reply.choices[0].message.content or "")  # it sees it
                else:
                    with pytest.raises(failure):
                        client.chat.completions.create(model="m", messages=_messages(True))
    written = "".join(p.read_text() for p in (tmp_path / "calls").glob("*.json"))
    assert len(_calls(tmp_path)) == 2 and SECRET not in written
    assert written.count("[redacted API key]") == 4  # text, model and id; the error's body
