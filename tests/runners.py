"""Runners addressed by file path (``tests/runners.py:name``), so Ray workers can load them."""

from __future__ import annotations

import random
import time

from counterfact import RunContext, RunResult


def echo_arm(ctx: RunContext) -> RunResult:
    """Answers 'yes' unless the arm declares ``answer``; reports its facets as the manifest."""
    answer = ctx.arm.facets.get("answer", "yes")
    return RunResult(output=str(answer), manifest=dict(ctx.arm.facets))


def noisy(ctx: RunContext) -> str:
    """Seeded noise: the same seed gives the same output on every worker."""
    return f"value-{random.Random(ctx.seed).randint(0, 3)}"


def fails_on_odd_seeds(ctx: RunContext) -> str:
    if ctx.seed % 2:
        msg = f"seed {ctx.seed} failed"
        raise RuntimeError(msg)
    return "yes"


def sleeps(ctx: RunContext) -> str:
    time.sleep(float(ctx.scenario.inputs.get("sleep_s", 0.01)))
    return "done"


def not_a_string(ctx: RunContext) -> object:
    return 42


NOT_CALLABLE = 3


def needs_two_removed(ctx: RunContext) -> str:
    """Wrong while either x or y is present (redundant causes)."""
    return "right" if {"x", "y"} <= set(ctx.arm.ablations) else "wrong"


def needs_two_removed_paid(ctx: RunContext) -> RunResult:
    """:func:`needs_two_removed` at ``{"usd": 1}`` a run."""
    return RunResult(output=needs_two_removed(ctx), cost={"usd": 1.0})


def reports_model_only(ctx: RunContext) -> RunResult:
    """Wrong while x is present; its manifest reports the arm's ``model`` facet and no other
    (a declared ``temperature`` goes unreported), or ``manifest_model`` from the inputs instead.
    """
    output = "right" if "x" in ctx.arm.ablations else "wrong"
    model = ctx.scenario.inputs.get("manifest_model", ctx.arm.facets.get("model"))
    return RunResult(output=output, manifest={"model": model})


def flip_rate(ctx: RunContext) -> str:
    """Answers 'B' instead of the reference 'A' with probability ``facets.rate`` (default 0.05),
    decided by (scenario, arm, seed) alone, so every worker and every rerun agrees.
    """
    rate = float(ctx.arm.facets.get("rate", 0.05))
    draw = random.Random(f"{ctx.scenario.id}/{ctx.arm.id}/{ctx.seed}").random()
    return "B" if draw < rate else "A"


def hostile(ctx: RunContext) -> RunResult:
    """Text and data a record writer must survive, chosen by the scenario's ``inputs.kind``:
    ``surrogate`` (a lone surrogate in the output and the manifest, as a non-UTF-8 file name
    decoded with surrogateescape gives), ``raise-surrogate`` (one in the error), ``deep`` (a
    manifest ``inputs.depth`` mappings deep).
    """
    kind = ctx.scenario.inputs["kind"]
    if kind == "raise-surrogate":
        raise ValueError("cannot open /data/caf\udcff.txt")
    if kind == "deep":
        manifest: dict[str, object] = {}
        for _ in range(int(ctx.scenario.inputs["depth"]) - 1):
            manifest = {"k": manifest}
        return RunResult(output="yes", manifest=manifest)
    return RunResult(output="caf\udcff" if ctx.arm.facets else "yes", manifest={"file": "\udcff"})


class _Escape(BaseException):
    """Not an Exception: what some libraries raise to unwind."""


def raises_base(ctx: RunContext) -> str:
    """Seed 0 of arm 'alt' raises ``inputs.what`` (SystemExit, KeyboardInterrupt or a bare
    BaseException subclass); every other run answers 'yes'.
    """
    if ctx.arm.id == "alt" and ctx.seed == 0:
        what = ctx.scenario.inputs["what"]
        raise {"exit": SystemExit(3), "interrupt": KeyboardInterrupt(), "base": _Escape("x")}[what]
    return "yes"


def leaves_a_thread(ctx: RunContext) -> str:
    """Answers 'yes' after starting a thread that is not a daemon and never ends."""
    import threading

    threading.Thread(target=time.sleep, args=(3600,), daemon=False).start()
    return "yes"


def varied_records(ctx: RunContext) -> RunResult:
    """Records whose columns vary by seed, for exports: failures, no manifest, manifest values of
    two kinds and nested lists, optional costs, and an output a spreadsheet would run.
    """
    s = ctx.seed
    if s % 7 == 3 and ctx.arm.id != "base":
        msg = f"seed {s} failed"
        raise RuntimeError(msg)
    manifest: dict[str, object] | None = None
    if s % 5:
        manifest = {"k": s if s % 2 else "text", "flag": bool(s % 3), **ctx.arm.facets}
        if s % 4 == 0:
            manifest["deep"] = {"a": [1, 2], "b": None}
    cost = None if s % 6 == 0 else {"usd": 0.001 * s, "tokens": s * 10}
    output = "=cmd" if s == 2 else ("yes" if (s + len(ctx.arm.id)) % 3 else "no")
    return RunResult(output=output, manifest=manifest, cost=cost)


def costs_from_inputs(ctx: RunContext) -> RunResult:
    """Answers 'yes' at a cost of ``{"usd": 1}``; seed 0 of arm 'alt' reports ``inputs.usd``."""
    usd = ctx.scenario.inputs["usd"] if (ctx.arm.id, ctx.seed) == ("alt", 0) else 1.0
    return RunResult(output="yes", cost={"usd": usd})
