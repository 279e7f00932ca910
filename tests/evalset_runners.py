"""Runners for eval-set tests: many questions, a few seeds, outcomes by question.

Each question's id is ``q<i>``; a run's output is ``right`` or ``wrong`` (the reference is
``right``, compared by ``contains``).
"""

from __future__ import annotations

import hashlib

from counterfact import RunContext


def _index(ctx: RunContext) -> int:
    return int(ctx.scenario.id.removeprefix("q"))


def identical_epochs(ctx: RunContext) -> str:
    """Every seed of a question gives the same answer (a fixed API seed): the baseline is right
    on every question but q7-q9; ``breaks7fixes3`` is wrong on q0-q6 and right on q7-q9;
    ``breaks10`` is wrong on q0-q9 where the baseline was right (q10-q19 here).
    """
    i, arm = _index(ctx), ctx.arm.id
    if arm == "breaks7fixes3":
        return "wrong" if i < 7 else "right"
    if arm == "breaks10":
        return "wrong" if i < 13 else "right"
    return "wrong" if 7 <= i < 10 else "right"


def _draw(ctx: RunContext) -> float:
    key = f"{ctx.scenario.id}/{ctx.arm.id}/{ctx.seed}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") / 2**64


def small_effect(ctx: RunContext) -> str:
    """Independent seeds: the baseline is wrong with probability 0.2, ``worse`` with 0.45 — no
    single question at 4 seeds can be significant, the set of 40 is.
    """
    rate = 0.45 if ctx.arm.id == "worse" else 0.2
    return "wrong" if _draw(ctx) < rate else "right"


def priced_small_effect(ctx: RunContext) -> dict[str, object]:
    """:func:`small_effect` with a price: 0.0045 usd and 1,234 tokens a run."""
    return {"output": small_effect(ctx), "cost": {"usd": 0.0045, "tokens": 1234}}


def aa_copies(ctx: RunContext) -> str:
    """An A/A pilot whose seeds are copies: the two sides disagree on 16 of 40 questions, half
    each way (the baseline alone is wrong on q0-q7, the challenger alone on q8-q15).
    """
    i, base = _index(ctx), ctx.arm.id == "base"
    return "wrong" if (i < 8 if base else 8 <= i < 16) else "right"


def one_question_effect(ctx: RunContext) -> dict[str, object]:
    """One question, independent seeds, manifests reported: the baseline is wrong on seed 3
    only (so the row's zero-tolerance baseline gate makes it ``inconclusive``), ``worse`` on
    seeds 4 and up.
    """
    wrong = ctx.seed >= 4 if ctx.arm.id == "worse" else ctx.seed == 3
    return {"output": "wrong" if wrong else "right", "manifest": dict(ctx.arm.facets)}


def holm_edge(ctx: RunContext) -> str:
    """Copies over 12 questions: the baseline (and ``same1``, ``same2``) is wrong on q9-q10,
    ``worse`` on q0-q8: 9 questions up, 2 down, 1 unchanged.
    """
    i = _index(ctx)
    if ctx.arm.id == "worse":
        return "wrong" if i < 9 else "right"
    return "wrong" if i in (9, 10) else "right"


def fixes_ten(ctx: RunContext) -> str:
    """Copies over 12 questions: the baseline is wrong on q0-q9, ``fixer`` right everywhere (a
    change that only fixes, as temperature 0 did on a real model: 40% to 69%)."""
    return "right" if ctx.arm.id == "fixer" or _index(ctx) >= 10 else "wrong"
