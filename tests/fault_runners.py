"""Runners for the fault tests, loaded by file path on Ray workers.

Each reads its behaviour from the scenario inputs and appends one line per call to
``inputs["log"]``: ``<session> <arm> <seed> <pid>``; the session comes from ``CF_SESSION``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from counterfact import RunContext


def _log(ctx: RunContext) -> None:
    line = f"{os.environ.get('CF_SESSION', '-')} {ctx.arm.id} {ctx.seed} {os.getpid()}\n"
    with Path(str(ctx.scenario.inputs["log"])).open("a", encoding="utf-8") as fh:
        fh.write(line)


def steady(ctx: RunContext) -> str:
    """Sleeps ``sleep_s`` (``slow_s`` from seed ``slow_from`` on, in session 1 only: a sweep
    still running when a test stops it, however loaded the machine); answers by the arm's
    ``answer`` facet (default 'yes')."""
    _log(ctx)
    inputs = ctx.scenario.inputs
    sleep_s = float(inputs.get("sleep_s", 0.0))
    first = os.environ.get("CF_SESSION") == "1"
    if first and "slow_from" in inputs and ctx.seed >= int(inputs["slow_from"]):
        sleep_s = float(inputs["slow_s"])
    time.sleep(sleep_s)
    return str(ctx.arm.facets.get("answer", "yes"))


def slow_on_seed(ctx: RunContext) -> str:
    """On ``slow_seed`` of the 'alt' arm, writes its pid to ``pid_file`` and sleeps ``slow_s``."""
    _log(ctx)
    inputs = ctx.scenario.inputs
    if ctx.arm.id == "alt" and ctx.seed == int(inputs["slow_seed"]):
        Path(str(inputs["pid_file"])).write_text(str(os.getpid()))
        time.sleep(float(inputs["slow_s"]))
    return str(ctx.arm.facets.get("answer", "yes"))


def misbehaves(ctx: RunContext) -> str:
    """'alt' seed 1 exits its process; seed 2 raises ConnectionError on its first two attempts
    (a count kept in ``inputs["log"]``), so it succeeds with retries >= 2."""
    _log(ctx)
    if ctx.arm.id == "alt" and ctx.seed == 1:
        os._exit(3)
    if ctx.arm.id == "alt" and ctx.seed == 2:
        tries = Path(str(ctx.scenario.inputs["log"])).read_text().count(" alt 2 ")
        if tries <= 2:
            raise ConnectionError(f"transient failure {tries}")
    return str(ctx.arm.facets.get("answer", "yes"))


def culprit(ctx: RunContext) -> str:
    """Sleeps ``sleep_s``; wrong while ``inputs['culprit']`` is not ablated."""
    _log(ctx)
    time.sleep(float(ctx.scenario.inputs.get("sleep_s", 0.0)))
    return "right" if ctx.scenario.inputs["culprit"] in ctx.arm.ablations else "wrong"
