"""A hostile chat-completions server on loopback. It echoes the key it was sent: in the reply's
text and model name (``/ok/v1``), or in a 400 error's body (``/error/v1``). And it misbehaves:

- ``/quota/v1``: HTTP 429 ``insufficient_quota``, OpenAI's "out of credit", every time;
- ``/drip/v1``: a reply whose body arrives one byte every ``DRIP_S`` seconds;
- ``/huge/v1``: a 200 of ``HUGE_BYTES`` bytes, its ``Content-Length`` declared;
- ``/big/v1``: the same reply chunked, its length not declared;
- ``/endless/v1``: a 200 whose chunked body never ends (64 KiB a chunk);
- ``/usage/<case>/v1``: a reply whose ``usage`` is one of :data:`BAD_USAGE`;
- ``/nomodel/v1``: a good reply that names no ``model``;
- ``/gzip/v1``: a good reply gzipped whatever ``Accept-Encoding`` asked (a bomb's carrier);
- ``/down/v1``: HTTP 503 every time (a server that stays down).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from counterfact.orchestrator.view.server import bind, url_of

DRIP_S = 0.2
"""Seconds between the bytes of ``/drip/v1``'s reply."""
HUGE_BYTES = 20 << 20
"""The size of ``/huge/v1``'s reply."""
QUOTA = {
    "error": {
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "type": "insufficient_quota",
        "param": None,
        "code": "insufficient_quota",
    }
}
"""OpenAI's body for a 429 that means "out of credit"."""
BAD_USAGE: dict[str, Any] = {
    "string": {"prompt_tokens": "abc", "completion_tokens": 1, "total_tokens": 2},
    "list": {"prompt_tokens": [1], "completion_tokens": 1, "total_tokens": 2},
    "object": {"prompt_tokens": {}, "completion_tokens": 1, "total_tokens": 2},
    "not-an-object": [1],
    "huge": {"prompt_tokens": 10**400, "completion_tokens": 1, "total_tokens": 2},
}
"""``usage`` values a broken server sends, by the path segment that asks for them."""


def _reply(model: str | None = "served", usage: Any = None) -> dict[str, Any]:
    reply: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Paris"},
                "finish_reason": "stop",
            }
        ],
        "usage": usage or {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }
    if model is not None:
        reply["model"] = model
    return reply


async def _quota(request: Request) -> JSONResponse:
    del request
    return JSONResponse(QUOTA, status_code=429)


async def _drip(request: Request) -> StreamingResponse:
    del request
    body = json.dumps(_reply()).encode()

    async def drip() -> AsyncIterator[bytes]:
        for byte in body:
            await asyncio.sleep(DRIP_S)
            yield bytes([byte])

    return StreamingResponse(drip(), media_type="application/json")


def _streamed(size: int | None) -> AsyncIterator[bytes]:
    """A reply whose answer is ``x`` repeated, 64 KiB a chunk: ``size`` bytes of valid JSON in
    all, or never ending (None). Nothing is held beyond one chunk."""
    head = b'{"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m", '
    head += b'"choices": [{"index": 0, "message": {"role": "assistant", "content": "'
    tail = b'"}, "finish_reason": "stop"}]}'

    async def chunks() -> AsyncIterator[bytes]:
        yield head
        left = None if size is None else size - len(head) - len(tail)
        while left is None or left > 0:
            chunk = 65536 if left is None else min(65536, left)
            yield b"x" * chunk
            if left is not None:
                left -= chunk
            await asyncio.sleep(0)
        yield tail

    return chunks()


async def _huge(request: Request) -> StreamingResponse:
    del request
    headers = {"content-length": str(HUGE_BYTES)}
    return StreamingResponse(_streamed(HUGE_BYTES), media_type="application/json", headers=headers)


async def _big(request: Request) -> StreamingResponse:
    del request
    return StreamingResponse(_streamed(HUGE_BYTES), media_type="application/json")


async def _endless(request: Request) -> StreamingResponse:
    del request
    return StreamingResponse(_streamed(None), media_type="application/json")


async def _usage(request: Request) -> JSONResponse:
    return JSONResponse(_reply(usage=BAD_USAGE[request.path_params["case"]]))


async def _no_model(request: Request) -> JSONResponse:
    del request
    return JSONResponse(_reply(model=None))


async def _gzip(request: Request) -> Response:
    del request
    body = gzip.compress(json.dumps(_reply()).encode())
    headers = {"content-encoding": "gzip"}
    return Response(body, media_type="application/json", headers=headers)


def _key(request: Request) -> str:
    return request.headers.get("authorization", "").removeprefix("Bearer ")


async def _ok(request: Request) -> JSONResponse:
    key = _key(request)
    return JSONResponse(
        {
            "id": f"chatcmpl-{key}",
            "object": "chat.completion",
            "created": 0,
            "model": f"served-with-{key}",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": f"Paris, says {key}"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
        }
    )


async def _error(request: Request) -> JSONResponse:
    body = {"error": {"message": f"key {_key(request)} is not allowed", "type": "invalid"}}
    return JSONResponse(body, status_code=400)


async def _down(request: Request) -> JSONResponse:
    del request
    body = {"error": {"message": "the service is unavailable", "type": "server_error"}}
    return JSONResponse(body, status_code=503)


@contextmanager
def echo_server() -> Iterator[str]:
    """The server's root URL (``http://127.0.0.1:PORT/``); stopped on exit."""
    app = Starlette(
        routes=[
            Route("/ok/v1/chat/completions", _ok, methods=["POST"]),
            Route("/error/v1/chat/completions", _error, methods=["POST"]),
            Route("/quota/v1/chat/completions", _quota, methods=["POST"]),
            Route("/drip/v1/chat/completions", _drip, methods=["POST"]),
            Route("/huge/v1/chat/completions", _huge, methods=["POST"]),
            Route("/big/v1/chat/completions", _big, methods=["POST"]),
            Route("/endless/v1/chat/completions", _endless, methods=["POST"]),
            Route("/usage/{case}/v1/chat/completions", _usage, methods=["POST"]),
            Route("/nomodel/v1/chat/completions", _no_model, methods=["POST"]),
            Route("/gzip/v1/chat/completions", _gzip, methods=["POST"]),
            Route("/down/v1/chat/completions", _down, methods=["POST"]),
        ]
    )
    with serve(app) as root:
        yield root


@contextmanager
def serve(app: Starlette) -> Iterator[str]:
    """``app`` served on 127.0.0.1 at a free port, in a thread: its root URL; stopped on exit."""
    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield url_of(sock)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
