"""A runner module that makes uvloop the event-loop policy when it is imported (as some users
of API clients do), addressed by file path like :mod:`tests.hostile_runners`.
"""

from __future__ import annotations

import asyncio
import time

import uvloop

from counterfact import RunContext

asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


async def loop_kind(ctx: RunContext) -> str:
    """Answers the module of the loop it runs on; seed 0 of arm 'alt' blocks that loop forever
    first (``inputs.what``: ``block-forever`` with ``time.sleep``, ``spin`` with a busy loop).
    """
    if ctx.arm.id == "alt" and ctx.seed == 0:
        if ctx.scenario.inputs["what"] == "spin":
            while True:
                pass
        time.sleep(10**6)
    await asyncio.sleep(0.01)
    return type(asyncio.get_running_loop()).__module__
