"""Noticing a runner that blocks the event loop its runs share, and saying so.

An ``async def`` runner that calls ``time.sleep``, spins, or makes a blocking call never gives
the loop back: no other run on it moves, and no ``timeout_s`` can fire, since timeouts are the
loop's own callbacks. The executor waiting on the loop asks :func:`blocked` while it waits;
once the loop has not turned for longer than the run's ``timeout_s`` (else
:data:`~counterfact.defaults.LOOP_BLOCKED_S`) and does not answer a poke within
:data:`CONFIRM_S` either, each run on it is recorded as failed with
:class:`~counterfact.exceptions.EventLoopBlocked` (:func:`blocked_record`) and the sweep goes on
on a fresh loop.
"""

from __future__ import annotations

from counterfact.defaults import LOOP_BLOCKED_S
from counterfact.exceptions import EventLoopBlocked
from counterfact.orchestrator.engine.calling.loops import LoopThread
from counterfact.orchestrator.engine.calling.worker import failed_record
from counterfact.probes.runner import RunContext
from counterfact.records.runs import RunRecord

CONFIRM_S = 1.0
"""How long a loop that looks blocked gets to answer before it is given up: a loop thread only
starved of the GIL for a while (a C call holding it on another thread) answers, a blocked one
does not."""

_FIX = (
    "inside async def, await asyncio.sleep instead of time.sleep and run blocking work in a "
    "thread (await asyncio.to_thread(...))"
)


def blocked_after(timeout_s: float | None) -> float:
    """Seconds a loop may go without turning before it is given up."""
    return LOOP_BLOCKED_S if timeout_s is None else timeout_s


def blocked(loop: LoopThread, after_s: float) -> bool:
    """True when ``loop`` has not turned for ``after_s`` and does not answer a poke either."""
    return loop.blocked_for() > after_s and not loop.answers(CONFIRM_S)


def _who(ctx: RunContext) -> str:
    return f"scenario {ctx.scenario.id!r}, arm {ctx.arm.id!r}, seed {ctx.seed}"


def blocked_record(
    ctx: RunContext,
    culprit: RunContext | None,
    timeout_s: float | None,
    elapsed: float,
    node: str | None,
) -> RunRecord:
    """The record of a run on a loop given up (``culprit``: the run whose call was on the loop
    when it was given up, when known; ``timeout_s``: the runs' timeout).
    """
    after_s = blocked_after(timeout_s)
    why = "no timeout_s" if timeout_s is None else "timeout_s"
    limit = f"more than {after_s:g} s ({why})"
    if culprit is ctx:
        what = f"this run blocked the event loop the sweep's runs share for {limit}"
    elif culprit is not None:
        what = f"the run of {_who(culprit)} blocked the event loop this run shared for {limit}"
    else:
        what = f"a runner blocked the event loop this run shared for {limit}"
    msg = (
        f"{what}, so no timeout on it could fire; counterfact gave the loop and its runs up and "
        f"went on on a fresh one: {_FIX}"
    )
    return failed_record(ctx, EventLoopBlocked.__name__, msg, elapsed, node)
