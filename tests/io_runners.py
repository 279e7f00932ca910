"""API-calling runners for the tests: real clients (openai, httpx) against ``tests.standin``.

The API's address comes from the scenario's ``inputs["base_url"]``, so the same runner works
in-process and on Ray workers. Clients are made once per process and event loop.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import openai

from counterfact import RateLimited, RunContext, RunResult

_CLIENTS: dict[tuple[str, int], Any] = {}
_LOCK = threading.Lock()


def _async_client(base_url: str) -> openai.AsyncOpenAI:
    key = (base_url, id(asyncio.get_running_loop()))
    if key not in _CLIENTS:
        _CLIENTS[key] = openai.AsyncOpenAI(base_url=base_url, api_key="none", max_retries=0)
    client: openai.AsyncOpenAI = _CLIENTS[key]
    return client


def _sync_client() -> httpx.Client:
    with _LOCK:
        if ("httpx", 0) not in _CLIENTS:
            limits = httpx.Limits(max_connections=200, max_keepalive_connections=200)
            _CLIENTS[("httpx", 0)] = httpx.Client(limits=limits, timeout=60)
    client: httpx.Client = _CLIENTS[("httpx", 0)]
    return client


def _body(ctx: RunContext) -> dict[str, Any]:
    return {
        "model": str(ctx.arm.facets.get("model", "steady-model")),
        "seed": ctx.seed,
        "messages": [{"role": "user", "content": f"{ctx.scenario.id} {ctx.arm.id}"}],
    }


async def ask_openai(ctx: RunContext) -> RunResult:
    """``async def``: one chat completion through ``openai.AsyncOpenAI``."""
    body = _body(ctx)
    client = _async_client(str(ctx.scenario.inputs["base_url"]))
    reply = await client.chat.completions.create(**body)
    tokens = float(reply.usage.total_tokens) if reply.usage else 0.0
    return RunResult(
        output=reply.choices[0].message.content or "",
        manifest={"model": reply.model},
        cost={"tokens": tokens, "usd": 0.01},
    )


def ask_httpx(ctx: RunContext) -> RunResult:
    """Sync: one chat completion through ``httpx.Client`` (a 429 raises HTTPStatusError)."""
    url = f"{ctx.scenario.inputs['base_url']}/chat/completions"
    response = _sync_client().post(url, json=_body(ctx))
    response.raise_for_status()
    data = response.json()
    return RunResult(
        output=data["choices"][0]["message"]["content"],
        manifest={"model": data["model"]},
        cost={"tokens": float(data["usage"]["total_tokens"]), "usd": 0.01},
    )


async def sleepy(ctx: RunContext) -> str:
    """``async def``: sleeps ``inputs["sleep_s"]`` (``inputs["slow_s"]`` on seed 0 of 'alt')."""
    inputs = ctx.scenario.inputs
    slow = ctx.arm.id == "alt" and ctx.seed == 0
    await asyncio.sleep(float(inputs["slow_s"] if slow else inputs.get("sleep_s", 0.01)))
    return "yes"


async def gated(ctx: RunContext) -> str:
    """``async def``: seeds below ``inputs["open"]`` answer at once; the others wait until the
    file ``inputs["gate"]`` exists (so a test can stop a sweep with runs in flight whatever the
    machine's load).
    """
    inputs = ctx.scenario.inputs
    if ctx.seed >= int(inputs["open"]):
        while not Path(str(inputs["gate"])).exists():
            await asyncio.sleep(0.02)
    return "yes"


def dies_on_one_seed(ctx: RunContext) -> str:
    """Sync: seed 3 of 'alt' exits its process; the others sleep a little and answer."""
    if ctx.arm.id == "alt" and ctx.seed == 3:
        os._exit(3)
    time.sleep(0.05)
    return "yes"


async def refuses_first(ctx: RunContext) -> str:
    """``async def``: raises RateLimited on a run's first call (a marker file per run)."""
    marker = Path(str(ctx.scenario.inputs["marks"])) / f"{ctx.arm.id}-{ctx.seed}"
    if not marker.exists():
        marker.touch()
        raise RateLimited("slow down", retry_after=0.01)
    return "yes"


async def async_culprit(ctx: RunContext) -> str:
    """``async def``: wrong while ``inputs['culprit']`` is not ablated."""
    await asyncio.sleep(0.01)
    return "right" if ctx.scenario.inputs["culprit"] in ctx.arm.ablations else "wrong"


async def async_answer(ctx: RunContext) -> str:
    """``async def``: 'yes' for the baseline, 'no' for any other arm."""
    await asyncio.sleep(0.005)
    return "yes" if ctx.arm.id == "base" else "no"


async def cancels_itself(ctx: RunContext) -> str:
    """``async def``: seed 1 of 'alt' awaits a task that gets cancelled (CancelledError)."""
    if ctx.arm.id == "alt" and ctx.seed == 1:
        task = asyncio.ensure_future(asyncio.sleep(10))
        task.cancel()
        await task
    return "yes"


_CACHED: list[openai.AsyncOpenAI] = []


async def cached_client(ctx: RunContext) -> str:
    """``async def``: one AsyncOpenAI per process, made on the first call's event loop (the
    pattern of ``configs/openai_agent.py``); wrong while ``inputs['culprit']`` is not ablated."""
    if not _CACHED:
        base_url = str(ctx.scenario.inputs["base_url"])
        _CACHED.append(openai.AsyncOpenAI(base_url=base_url, api_key="none", max_retries=0))
    await _CACHED[0].chat.completions.create(**_body(ctx))
    return "right" if ctx.scenario.inputs["culprit"] in ctx.arm.ablations else "wrong"
