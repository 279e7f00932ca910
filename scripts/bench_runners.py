"""Runners for the benchmarks, loaded by file path on Ray workers."""

from __future__ import annotations

import time

from counterfact import RunContext


def sleep_20ms(ctx: RunContext) -> str:
    time.sleep(0.02)
    return "done"


def instant(ctx: RunContext) -> str:
    return "done"


def culprit_sleeper(ctx: RunContext) -> str:
    """I/O-bound: sleeps like an API call; wrong while the scenario's culprit is present."""
    time.sleep(float(ctx.scenario.inputs["run_s"]))
    return "right" if ctx.scenario.inputs["culprit"] in ctx.arm.ablations else "wrong"


def jittery(ctx: RunContext) -> str:
    """Sleeps 10-40 ms (seeded); answers by the arm's ``answer`` facet."""
    time.sleep(0.01 + 0.03 * ((ctx.seed * 7919) % 100) / 100)
    return str(ctx.arm.facets.get("answer", "yes"))


def rate_sleeper(ctx: RunContext) -> str:
    """Sleeps 20 ms; answers 'B' (a flip against reference 'A') with probability facets.rate,
    decided by (scenario, arm, seed) so every worker agrees."""
    import random

    time.sleep(0.02)
    rate = float(ctx.arm.facets.get("rate", 0.05))
    draw = random.Random(f"{ctx.scenario.id}/{ctx.arm.id}/{ctx.seed}").random()
    return "B" if draw < rate else "A"


def rate_sleeper_fast(ctx: RunContext) -> str:
    """:func:`rate_sleeper` without the sleep."""
    import random

    rate = float(ctx.arm.facets.get("rate", 0.05))
    draw = random.Random(f"{ctx.scenario.id}/{ctx.arm.id}/{ctx.seed}").random()
    return "B" if draw < rate else "A"


_TRIES: dict[tuple[str, str, int], int] = {}


def varied(ctx: RunContext) -> object:
    """Every kind of record, decided by (scenario, arm, seed): outputs that flip, manifests, costs,
    a retried error, raised and contract errors, and text UTF-8 cannot encode.
    """
    import random

    key = (ctx.scenario.id, ctx.arm.id, ctx.seed)
    seed = ctx.seed
    if seed % 23 == 4:
        _TRIES[key] = _TRIES.get(key, 0) + 1
        if _TRIES[key] == 1:
            raise ConnectionError(f"flaky on seed {seed}")  # retried (retry_on)
    if seed % 11 == 3:
        raise ValueError(f"seed {seed} is refused")
    if seed % 13 == 5:
        return {"output": 5}  # breaks the contract: RunnerReturnError
    if seed % 17 == 7:
        return "odd \udcff text"  # a lone surrogate: escaped, flagged text_escaped
    draw = random.Random(f"{ctx.scenario.id}/{ctx.arm.id}/{seed}").random()
    flip = float(ctx.arm.facets.get("rate", 0.0))
    return {
        "output": "B" if draw < flip else "A",
        "manifest": {"rate": flip, "tags": ["x", "y"], "nested": {"seed": ctx.seed}},
        "cost": {"tokens": float(seed % 7), "usd": round(draw / 100, 6)},
    }
