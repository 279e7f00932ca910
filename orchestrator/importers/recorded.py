"""One recorded chat call, read from its JSON form (see :mod:`.calls` for the files)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from counterfact.exceptions import ConfigError

FIELD = "CALL"


def safe_name(text: str) -> str:
    """``text`` as one folder or sweep name: no separator, no ``..``, at most 80 characters (a
    call's name comes from data: a span id may say ``../../x``).
    """
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")[:80] or "call"


@dataclass(frozen=True)
class RecordedCall:
    """One call: its request body, the answer it got (if recorded), where it came from."""

    id: str
    """The call's name: the file's stem, ``<stem>:<line>`` in a JSONL, the span id in OTLP."""
    request: Mapping[str, Any]
    """The chat-completions request body (``model``, ``messages`` and any other fields)."""
    answer: str | None
    """The text of the recorded reply, None when only the request was recorded."""
    source: str
    """The file (and line or span) it was read from."""


def fail(where: str, problem: str) -> ConfigError:
    """The one-line error about a call file: ``CALL: <where>: <problem>``."""
    return ConfigError(f"{where}: {problem}", field=FIELD)


def _answer(response: Any, where: str) -> str:
    """The text of a chat-completions reply."""
    try:
        content = response["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        msg = "its response holds no choices[0].message.content; record the call again"
        raise fail(where, msg) from exc
    if not isinstance(content, str):
        msg = "its response's message has no text content (a tool call?); blame a call whose "
        raise fail(where, msg + "reply is text")
    return content


def _request(body: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        msg = (
            "not a chat-completions request: it needs a 'messages' list (a bare request body, "
            'or {"request": ..., "response": ...} as counterfact record writes it)'
        )
        raise fail(where, msg)
    if not any(isinstance(m, dict) and m.get("role") == "user" for m in body["messages"]):
        raise fail(where, "the request holds no user message, so there is no question")
    return body


def call_of(data: Any, name: str, where: str) -> RecordedCall:
    """One call from its JSON form (a bare request, or ``{request, response}``).

    Raises:
        ConfigError: not a request, a recorded error, or a reply without text.
    """
    if isinstance(data, dict) and "request" in data:
        status = data.get("status", 200)
        if not isinstance(status, int) or status >= 400:
            msg = f"the recorded call failed (status {status}); blame a call that got an answer"
            raise fail(where, msg)
        response = data.get("response")
        answer = None if response is None else _answer(response, where)
        return RecordedCall(name, _request(data["request"], where), answer, where)
    return RecordedCall(name, _request(data, where), None, where)
