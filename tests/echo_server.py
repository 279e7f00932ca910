"""A hostile chat-completions server on loopback that echoes the key it was sent: in the
reply's text and model name (``/ok/v1``), or in a 400 error's body (``/error/v1``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from counterfact.orchestrator.view.server import bind, url_of


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


@contextmanager
def echo_server() -> Iterator[str]:
    """The server's root URL (``http://127.0.0.1:PORT/``); stopped on exit."""
    app = Starlette(
        routes=[
            Route("/ok/v1/chat/completions", _ok, methods=["POST"]),
            Route("/error/v1/chat/completions", _error, methods=["POST"]),
        ]
    )
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
