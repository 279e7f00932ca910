"""Runners that attack the engine itself (issue 27), addressed by file path so Ray workers and CLI
subprocesses can load them.

Each reads what to do from the scenario's ``inputs.what``; only seed 0 of arm 'alt' misbehaves
(every other run answers 'yes'), unless ``inputs.every`` is set: then every run of 'alt' does.
"""

from __future__ import annotations

import asyncio
import time

from counterfact import RunContext


class Unwind(BaseException):
    """Not an Exception: what some libraries raise to unwind the stack."""


RAISED: dict[str, BaseException] = {
    "interrupt": KeyboardInterrupt("the runner's own interrupt"),
    "exit": SystemExit("the runner's own exit"),
    "generator-exit": GeneratorExit("the runner's own generator exit"),
    "base": Unwind("the runner's own unwind"),
}
"""What ``inputs.what`` may name to be raised (each with a message the record must keep)."""

OUTPUTS: dict[str, str] = {
    "huge": "x" * 50_000_000,
    "nul": "yes\x00no\x00",
    "surrogate": "caf\udcff \ud800",
    "ansi": "\x1b[2J\x1b[31mred\x1b[0m\x1b]0;title\x07\r\x08",
}
"""Outputs the records and the report must survive, by ``inputs.what``."""


def _misbehaves(ctx: RunContext) -> bool:
    if ctx.arm.id != "alt":
        return False
    return bool(ctx.scenario.inputs.get("every")) or ctx.seed == 0


def _sync_act(what: str) -> str:
    if what in RAISED:
        raise RAISED[what]
    if what in OUTPUTS:
        return OUTPUTS[what]
    if what == "sleep":
        time.sleep(1.0)
        return "yes"
    msg = f"unknown hostile act {what!r}"
    raise ValueError(msg)


def sync_hostile(ctx: RunContext) -> str:
    """A plain function that does ``inputs.what`` (a ``RAISED`` or ``OUTPUTS`` key)."""
    if not _misbehaves(ctx):
        return "yes"
    return _sync_act(str(ctx.scenario.inputs["what"]))


async def async_hostile(ctx: RunContext) -> str:
    """An ``async def`` runner that does ``inputs.what``: a ``RAISED`` or ``OUTPUTS`` key, or loop
    misuse: ``stop-loop`` (``loop.stop()``), ``close-loop`` (``loop.close()``), ``block``
    (``time.sleep`` on the loop), ``stop-later`` (``loop.stop`` scheduled as a callback),
    ``raise-in-callback`` (a callback that raises ``KeyboardInterrupt``), ``block-forever``
    (``time.sleep`` for 11 days on the loop), ``spin`` (a busy loop that never ends),
    ``cancel-others`` (cancels every other task on the loop, the engine's included). Seed
    ``inputs.hang_seed`` of arm 'base', when set, sleeps 600 s first.
    """
    await asyncio.sleep(0.01)
    if ctx.arm.id == "base" and ctx.seed == ctx.scenario.inputs.get("hang_seed"):
        await asyncio.sleep(600)  # only timeout_s can end this run
    if not _misbehaves(ctx):
        return "yes"
    what = str(ctx.scenario.inputs["what"])
    loop = asyncio.get_running_loop()
    if what == "stop-loop":
        loop.stop()
    elif what == "close-loop":
        loop.close()
    elif what == "block":
        time.sleep(1.0)
    elif what == "stop-later":
        loop.call_soon(loop.stop)
    elif what == "raise-in-callback":
        loop.call_soon(_interrupt)
    elif what == "block-forever":
        time.sleep(10**6)
    elif what == "spin":
        _spin()
    elif what == "cancel-others":
        for task in asyncio.all_tasks(loop):
            if task is not asyncio.current_task(loop):
                task.cancel()
    else:
        return _sync_act(what)
    await asyncio.sleep(0.05)
    return "yes"


def _spin() -> None:
    while True:
        pass


def _interrupt() -> None:
    raise KeyboardInterrupt("raised in the runner's callback")


async def async_slow(ctx: RunContext) -> str:
    """An ``async def`` runner that answers 'yes' after 0.1 s."""
    await asyncio.sleep(0.1)
    return "yes"


async def async_api(ctx: RunContext) -> str:
    """An ``async def`` runner that asks the chat stand-in at ``inputs.url`` (its ``/v1``) once;
    a 429 is raised as ``httpx.HTTPStatusError`` (the engine waits its ``Retry-After``).
    """
    import httpx

    body = {"model": "stand-in", "seed": ctx.seed, "messages": [{"role": "user", "content": "q"}]}
    async with httpx.AsyncClient(timeout=30) as client:
        reply = await client.post(f"{ctx.scenario.inputs['url']}/chat/completions", json=body)
    reply.raise_for_status()
    return str(reply.json()["choices"][0]["message"]["content"])
