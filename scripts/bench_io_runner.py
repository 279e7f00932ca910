"""Runners for scripts/bench_io.py: request ``q<seed>`` from the stand-in at ``BENCH_BASE_URL``,
the same body every system sends (so every system gets the same latencies)."""

from __future__ import annotations

import asyncio
import os
import threading
import time

import httpx

from counterfact import RunContext, RunResult

_ASYNC: dict[int, list[httpx.AsyncClient]] = {}
SHARDS = 16
"""httpx.AsyncClients per event loop: httpcore's pool scans every connection per request, so one
pool of 1,000 connections is the bottleneck at 1,000 in flight; 16 pools of <= 64 are not."""
_SYNC: list[httpx.Client] = []
_LOCK = threading.Lock()
LIMITS = httpx.Limits(max_connections=2000, max_keepalive_connections=2000)


def body(i: int) -> dict[str, object]:
    return {"model": "bench", "messages": [{"role": "user", "content": f"q{i}"}]}


def index(ctx: RunContext) -> int:
    """Run (arm a or b, seed s) sends request ``q<2s>`` or ``q<2s+1>``: 0 .. n-1 over the sweep."""
    return 2 * ctx.seed + (ctx.arm.id == "b")


def _url() -> str:
    return os.environ["BENCH_BASE_URL"] + "/chat/completions"


def _result(data: dict[str, object]) -> RunResult:
    message = data["choices"][0]["message"]["content"]  # type: ignore[index]
    return RunResult(output=str(message), cost={"usd": 0.001})


async def ask(ctx: RunContext) -> RunResult:
    """``async def`` runner: httpx.AsyncClient, one per event loop."""
    loop = id(asyncio.get_running_loop())
    if loop not in _ASYNC:
        _ASYNC[loop] = [httpx.AsyncClient(limits=LIMITS, timeout=120) for _ in range(SHARDS)]
    client = _ASYNC[loop][index(ctx) % SHARDS]
    response = await client.post(_url(), json=body(index(ctx)))
    response.raise_for_status()
    return _result(response.json())


def ask_sync(ctx: RunContext) -> RunResult:
    """Sync runner: httpx.Client (thread-safe), one per process."""
    with _LOCK:
        if not _SYNC:
            _SYNC.append(httpx.Client(limits=LIMITS, timeout=120))
    response = _SYNC[0].post(_url(), json=body(index(ctx)))
    response.raise_for_status()
    return _result(response.json())


def instant(ctx: RunContext) -> str:
    """CPU path: returns at once."""
    return "yes"


def busy_20ms(ctx: RunContext) -> str:
    """CPU path: 20 ms of computation."""
    end = time.perf_counter() + 0.02
    while time.perf_counter() < end:
        pass
    return "yes"
