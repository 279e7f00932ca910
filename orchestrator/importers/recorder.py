"""``counterfact record``: a recording proxy for the OpenAI chat-completions API.

An agent in any framework pointed at it (``OPENAI_BASE_URL=http://127.0.0.1:PORT/v1``) talks
to the upstream API through it; each chat completion leaves one JSON file in the output folder,
``000001.json``, ``000002.json`` ... in the order the calls arrived::

    {"request": {...}, "response": {...}, "started_at": "...", "duration_s": 0.81, "status": 200}

A streamed reply is relayed chunk by chunk as it comes and saved assembled, as the
``chat.completion`` it amounts to (text and tool calls). Every other request (``/models`` ...) is
forwarded without being recorded. Authorization headers are forwarded and never written. The
folder is what ``counterfact blame`` reads. Built on starlette, uvicorn and httpx.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from counterfact.orchestrator.runners.redact import redact_data, secrets_of
from counterfact.orchestrator.storage.atomic import write_atomic

FORWARDED = ("authorization", "api-key", "openai-organization", "openai-project", "content-type")
"""Request headers passed upstream (and never written)."""
REPLY_HEADERS = ("content-type", "retry-after", "x-request-id")


@dataclass
class Recorder:
    """Numbers and writes the calls; one per proxy."""

    out: Path
    upstream: str
    count: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def next_name(self) -> Path:
        """The next file, numbered at arrival."""
        async with self.lock:
            self.count += 1
            return self.out / f"{self.count:06d}.json"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _write(
    path: Path, request: Request, sent: Any, reply: Any, started: str, took: float, status: int
) -> None:
    secrets = _credentials(request)  # an upstream that echoes the key: never written
    record = {
        "request": redact_data(sent, secrets),
        "response": redact_data(reply, secrets),
        "started_at": started,
        "duration_s": round(took, 4),
        "status": status,
    }
    write_atomic(path, json.dumps(record, ensure_ascii=False, indent=1) + "\n")


def _reply_body(upstream: httpx.Response) -> Any:
    """The reply as JSON data; an error page that is not JSON is kept as its text."""
    if not upstream.content:
        return None
    try:
        return upstream.json()
    except ValueError:
        return {"text": upstream.text[:100_000]}


def _credentials(request: Request) -> tuple[str, ...]:
    """The key values the client sent (``Authorization: Bearer KEY``, ``api-key: KEY``)."""
    found = [v for k, v in request.headers.items() if k.lower() in ("authorization", "api-key")]
    return secrets_of([v[7:].strip() if v[:7].lower() == "bearer " else v.strip() for v in found])


def _headers(request: Request) -> dict[str, str]:
    return {k: v for k, v in request.headers.items() if k.lower() in FORWARDED}


def _reply_headers(upstream: httpx.Response) -> dict[str, str]:
    return {k: v for k, v in upstream.headers.items() if k.lower() in REPLY_HEADERS}


@dataclass
class _Stream:
    """A streamed reply's chunks, assembled into the completion they amount to."""

    text: list[str] = field(default_factory=list)
    tools: dict[int, dict[str, Any]] = field(default_factory=dict)
    head: dict[str, Any] = field(default_factory=dict)
    finish: str | None = None

    def feed(self, line: str) -> None:
        """One SSE line (``data: {...}``); a line that is not a chunk is skipped (the client
        still gets it: the relay never stops for the record's sake).
        """
        if not line.startswith("data:") or line[5:].strip() == "[DONE]":
            return
        try:
            chunk = json.loads(line[5:])
            self._take(chunk)
        except (ValueError, TypeError, AttributeError, KeyError):
            return

    def _take(self, chunk: dict[str, Any]) -> None:
        """One parsed chunk: its text, tool-call pieces, finish reason and usage."""
        self.head = {k: chunk[k] for k in ("id", "model", "created") if k in chunk} or self.head
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            self.text.append(delta.get("content") or "")
            for call in delta.get("tool_calls") or []:
                self._tool(call)
            self.finish = choice.get("finish_reason") or self.finish
        if chunk.get("usage"):
            self.head["usage"] = chunk["usage"]

    def _tool(self, call: dict[str, Any]) -> None:
        held = self.tools.setdefault(
            int(call.get("index", 0)), {"id": "", "type": "function", "function": {}}
        )
        held["id"] = call.get("id") or held["id"]
        fn = call.get("function") or {}
        if fn.get("name"):
            held["function"]["name"] = fn["name"]
        args = held["function"].get("arguments", "") + (fn.get("arguments") or "")
        held["function"]["arguments"] = args

    def completion(self) -> dict[str, Any]:
        """The whole reply, as a non-streamed ``chat.completion``."""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text)}
        if self.tools:
            message["tool_calls"] = [self.tools[i] for i in sorted(self.tools)]
        usage = self.head.pop("usage", None)
        found = {"object": "chat.completion", **self.head}
        found["choices"] = [{"index": 0, "message": message, "finish_reason": self.finish}]
        return found | ({"usage": usage} if usage else {})


async def _relay(
    upstream: httpx.Response, stream: _Stream, done: asyncio.Event
) -> AsyncIterator[bytes]:
    buffer = b""
    try:
        async for chunk in upstream.aiter_bytes():  # decoded: the client gets no encoding header
            yield chunk
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                stream.feed(line.decode("utf-8", "replace").strip())
        stream.feed(buffer.decode("utf-8", "replace").strip())  # a last line with no newline
    finally:
        done.set()


def build_app(recorder: Recorder) -> Starlette:
    """The proxy: chat completions recorded, everything else forwarded."""
    client = httpx.AsyncClient(timeout=httpx.Timeout(600.0, connect=10.0))

    async def chat(request: Request) -> Response:
        body = await request.json()
        path, started, began = await recorder.next_name(), _now(), time.monotonic()
        url = recorder.upstream.rstrip("/") + "/chat/completions"
        sent = client.build_request("POST", url, json=body, headers=_headers(request))
        upstream = await client.send(sent, stream=bool(body.get("stream")))
        if not body.get("stream") or upstream.status_code >= 400:
            await upstream.aread()
            reply = _reply_body(upstream)
            took = time.monotonic() - began
            _write(path, request, body, reply, started, took, upstream.status_code)
            await upstream.aclose()
            return Response(upstream.content, upstream.status_code, _reply_headers(upstream))
        stream, done = _Stream(), asyncio.Event()

        async def save() -> None:
            await upstream.aclose()
            took = time.monotonic() - began
            _write(path, request, body, stream.completion(), started, took, upstream.status_code)

        return StreamingResponse(
            _relay(upstream, stream, done),
            status_code=upstream.status_code,
            headers=_reply_headers(upstream),
            background=BackgroundTask(save),
        )

    async def other(request: Request) -> Response:
        tail = request.url.path.removeprefix("/v1")
        query = f"?{request.url.query}" if request.url.query else ""
        url = recorder.upstream.rstrip("/") + tail + query
        reply = await client.request(
            request.method, url, content=await request.body(), headers=_headers(request)
        )
        return Response(reply.content, reply.status_code, _reply_headers(reply))

    methods = ["GET", "POST", "DELETE"]
    return Starlette(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/chat/completions", chat, methods=["POST"]),
            Route("/{path:path}", other, methods=methods),
        ]
    )
