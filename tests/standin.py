"""A loopback stand-in for a chat-completions API: real HTTP (starlette on uvicorn), latency and
429s configurable, the same answer and latency for the same request whatever client sends it.

Used by the tests (with the real ``openai`` and ``httpx`` clients) and by
``scripts/bench_io.py``. ``POST /v1/chat/completions`` takes an OpenAI-style body; the latency
of a request is a lognormal draw seeded by the request's content (median ``median_s``, 95th
percentile ``p95_s``), so every system measured gets the same requests with the same waits. With
``max_in_flight``, a request beyond that many in flight is refused at once with HTTP 429 and
``Retry-After: retry_after``; with ``refuse_rate``, that share of requests is refused the same
way at random (seeded by the request and how many times it was sent: every client meets the
same weather); with ``outage`` (start, seconds), every request is refused from ``start`` seconds
after the first request (since the stats were reset) for that long; with ``storm`` (refused,
served), requests come in storms: ``refused`` in a row are refused, the next ``served`` are served,
and so on (counted over every request received); with ``status``, a request it names is
answered with that HTTP error. The answer is ``Paris`` unless the request's model is
``flaky-model`` (then ``Lyon`` on odd seeds) or its system message says ``contrary`` (then
``Lyon``). The reply
names the model asked for, or ``serve_as[model]`` (a dated snapshot, a silent fallback); its
``usage`` counts the prompt's words as input tokens and one output token. Every request body
served is kept in ``stats.bodies`` (the first :data:`KEPT_BODIES`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, StreamingResponse
from starlette.routing import Route

KEPT_BODIES = 10_000
"""How many request bodies ``stats.bodies`` keeps."""


@dataclass
class StandInStats:
    """What the server saw."""

    served: int = 0
    refused: int = 0
    peak_in_flight: int = 0
    served_latency_s: float = 0.0
    in_flight: int = 0
    started: list[float] = field(default_factory=list)
    first_at: float | None = None
    sent: dict[str, int] = field(default_factory=dict)
    after_outage: list[tuple[float, int]] = field(default_factory=list)
    """(seconds since the outage ended, calls in flight) at each call served after it."""
    bodies: list[dict[str, Any]] = field(default_factory=list)
    """The body of each request served, in the order served."""
    received: int = 0
    """Requests received, refused ones included (what ``storm`` counts)."""


def request_latency(body: dict[str, Any], median_s: float, p95_s: float) -> float:
    """The latency of a request: lognormal, seeded by its messages and seed (the same request
    waits the same whichever client sends it, whatever other parameters it adds).
    """
    key = {"messages": body.get("messages"), "seed": body.get("seed")}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
    sigma = math.log(p95_s / median_s) / 1.6448536269514722  # z of the 95th percentile
    return float(rng.lognormal(math.log(median_s), sigma))


class StandIn:
    """The server, on ``127.0.0.1`` at a free port, in a thread of this process."""

    def __init__(
        self,
        *,
        median_s: float = 0.05,
        p95_s: float = 0.15,
        max_in_flight: int | None = None,
        retry_after: float = 1.0,
        refuse_rate: float = 0.0,
        outage: tuple[float, float] | None = None,
        storm: tuple[int, int] | None = None,
        serve_as: dict[str, str] | None = None,
        answer: Callable[[dict[str, Any]], str] | None = None,
        raw: str | None = None,
        status: Callable[[dict[str, Any]], int | None] | None = None,
    ) -> None:
        self.median_s = median_s
        self.p95_s = p95_s
        self.max_in_flight = max_in_flight
        self.retry_after = retry_after
        self.refuse_rate = refuse_rate
        self.outage = outage
        self.storm = storm
        self.serve_as = dict(serve_as or {})
        self.answer = answer
        self.raw = raw
        """When given, the reply's text from the request body (a model whose answer depends
        on its context); else Paris or Lyon as above."""
        self.status = status
        """When given, an HTTP error status to answer a request with (its body an OpenAI-style
        error), or None to serve it."""
        self.stats = StandInStats()
        app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/stats", self._stats, methods=["GET", "DELETE"]),
                Route("/v1/models", self._models, methods=["GET"]),
            ]
        )
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=0,
            log_level="error",
            lifespan="off",
            backlog=4096,
            timeout_keep_alive=120,  # a client pool's idle connection is never cut mid-reuse
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True, name="stand-in")

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1`` (what ``OPENAI_BASE_URL`` takes)."""
        sockets = self._server.servers[0].sockets
        port = sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/v1"

    @property
    def open_connections(self) -> int:
        """TCP connections the server holds open now (a client's pool keeps them between calls
        until the client is closed)."""
        return len(self._server.server_state.connections)

    def __enter__(self) -> StandIn:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                msg = "the stand-in API did not start"
                raise RuntimeError(msg)
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)

    async def _models(self, request: Request) -> JSONResponse:
        del request
        names = ["stand-in", "steady-model", "flaky-model", *self.serve_as]
        data = [{"id": n, "object": "model", "created": 0, "owned_by": "me"} for n in names]
        return JSONResponse({"object": "list", "data": data})

    async def _stats(self, request: Request) -> JSONResponse:
        if request.method == "DELETE":
            self.stats = StandInStats()
        s = self.stats
        return JSONResponse(
            {
                "served": s.served,
                "refused": s.refused,
                "peak_in_flight": s.peak_in_flight,
                "served_latency_s": s.served_latency_s,
                "after_outage": s.after_outage,
            }
        )

    async def _chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        stats = self.stats
        now = time.monotonic()
        if stats.first_at is None:
            stats.first_at = now
        since_outage = self._since_outage(now - stats.first_at)
        full = self.max_in_flight is not None and stats.in_flight >= self.max_in_flight
        stats.received += 1
        if (
            full
            or self._in_storm(stats.received)
            or (since_outage is not None and since_outage < 0)
            or self._weather(body)
        ):
            stats.refused += 1
            headers = {"Retry-After": f"{self.retry_after:g}"}
            error = {"error": {"message": "rate limit", "type": "rate_limit_exceeded"}}
            return JSONResponse(error, status_code=429, headers=headers)
        failing = self.status(body) if self.status is not None else None
        if failing is not None:
            error = {"error": {"message": f"stand-in error {failing}", "type": "stand_in"}}
            return JSONResponse(error, status_code=failing)
        stats.in_flight += 1
        stats.peak_in_flight = max(stats.peak_in_flight, stats.in_flight)
        if since_outage is not None and len(stats.after_outage) < 100_000:
            stats.after_outage.append((round(since_outage, 3), stats.in_flight))
        wait = request_latency(body, self.median_s, self.p95_s)
        try:
            await asyncio.sleep(wait)
        finally:
            stats.in_flight -= 1
        stats.served += 1
        stats.served_latency_s += wait
        if len(stats.bodies) < KEPT_BODIES:
            stats.bodies.append(body)
        reply = _completion(body, self.serve_as)
        if self.answer is not None:
            reply["choices"][0]["message"]["content"] = self.answer(body)
        if body.get("stream"):
            return StreamingResponse(_chunks(reply), media_type="text/event-stream")
        if self.raw is not None:  # a broken server: 200 with a body that is not JSON
            return PlainTextResponse(self.raw)
        return JSONResponse(reply)

    def _since_outage(self, elapsed: float) -> float | None:
        """Seconds since the outage ended (negative: in it), None before it or without one."""
        if self.outage is None or elapsed < self.outage[0]:
            return None
        return elapsed - self.outage[0] - self.outage[1]

    def _in_storm(self, received: int) -> bool:
        """Is request number ``received`` (1, 2, ...) one of a storm's refusals?"""
        if self.storm is None:
            return False
        refused, served = self.storm
        return (received - 1) % (refused + served) < refused

    def _weather(self, body: dict[str, Any]) -> bool:
        """Refuse this sending of this request at random (``refuse_rate``), the same for every
        client."""
        if not self.refuse_rate:
            return False
        key = json.dumps(body.get("messages"), sort_keys=True)
        sent = self.stats.sent[key] = self.stats.sent.get(key, 0) + 1
        digest = hashlib.sha256(f"{key}#{sent}".encode()).digest()
        return int.from_bytes(digest[:8], "little") / 2**64 < self.refuse_rate


def _chunks(reply: dict[str, Any]) -> Iterator[str]:
    """The reply as server-sent events, a word a chunk, as a streaming API sends it."""
    words = reply["choices"][0]["message"]["content"].split(" ")
    head = {k: reply[k] for k in ("id", "created", "model")}
    for i, word in enumerate(words):
        delta = {"content": word if i == 0 else " " + word}
        if i == 0:
            delta["role"] = "assistant"
        chunk = {**head, "object": "chat.completion.chunk"}
        chunk["choices"] = [{"index": 0, "delta": delta, "finish_reason": None}]
        yield f"data: {json.dumps(chunk)}\n\n"
    last = {**head, "object": "chat.completion.chunk"}
    last["choices"] = [{"index": 0, "delta": {}, "finish_reason": "stop"}]
    yield f"data: {json.dumps(last)}\n\ndata: [DONE]\n\n"


def _contrary(messages: list[dict[str, Any]]) -> bool:
    return any(
        m.get("role") == "system" and "contrary" in str(m.get("content", "")).lower()
        for m in messages
    )


def _completion(body: dict[str, Any], serve_as: dict[str, str] | None = None) -> dict[str, Any]:
    asked = str(body.get("model", "stand-in"))
    model = (serve_as or {}).get(asked, asked)
    seed = int(body.get("seed") or 0)
    flaky = asked == "flaky-model" and seed % 2
    answer = "Lyon" if flaky or _contrary(body.get("messages", [])) else "Paris"
    prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
    return {
        "id": f"chatcmpl-{seed}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": answer},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": 1,
            "total_tokens": prompt_tokens + 1,
        },
    }


def main() -> None:
    """``python -m tests.standin --median-s 1 --p95-s 3 [--max-in-flight 20]``: serve until
    killed; prints the base URL on its first line.
    """
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--median-s", type=float, default=1.0)
    parser.add_argument("--p95-s", type=float, default=3.0)
    parser.add_argument("--max-in-flight", type=int, default=None)
    parser.add_argument("--retry-after", type=float, default=1.0)
    parser.add_argument("--refuse-rate", type=float, default=0.0)
    parser.add_argument("--outage", type=float, nargs=2, default=None, metavar=("AT_S", "FOR_S"))
    args = parser.parse_args()
    with StandIn(
        median_s=args.median_s,
        p95_s=args.p95_s,
        max_in_flight=args.max_in_flight,
        retry_after=args.retry_after,
        refuse_rate=args.refuse_rate,
        outage=None if args.outage is None else (args.outage[0], args.outage[1]),
    ) as api:
        print(api.base_url, flush=True)
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    main()
