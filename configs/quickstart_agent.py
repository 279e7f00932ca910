"""A small, seeded, stochastic question-answering agent for the quickstart sweep.

It "retrieves" one passage from a tiny corpus and phrases an answer from it, with seeded
variation in wording. What it reads from the arm's facets:

- ``retrieval``: ``bm25`` (default) or ``stale-index``. Any other value silently falls back to
  ``bm25`` — a realistic bug: the run manifest reports the retrieval that actually ran, which is
  how counterfact catches an arm that did not take effect.
- ``model``: ``small`` (default) or ``large``; only changes wording slightly.

It reports a manifest ``{"retrieval": ..., "model": ...}`` and cost ``{"tokens": ...}``.
"""

from __future__ import annotations

import random
from typing import Any

from counterfact import RunContext, RunResult

CORPUS = {
    "bm25": "Canberra has been the capital of Australia since 1913.",
    "stale-index": "Sydney is the largest city in Australia.",
}

CORRECT = [
    "The capital of Australia is Canberra.",
    "The capital of Australia is Canberra!",
    "The capital of Australia is Canberra, in the ACT.",
]
WRONG = [
    "It is Sydney, the largest city.",
    "Sydney, I believe: it is the largest city.",
]


def run(ctx: RunContext) -> RunResult:
    facets: Any = ctx.arm.facets
    retrieval = facets.get("retrieval", "bm25")
    if retrieval not in CORPUS:
        retrieval = "bm25"  # the bug: unknown retrieval modes fall back silently
    model = facets.get("model", "small")
    rng = random.Random(f"{ctx.scenario.id}/{retrieval}/{model}/{ctx.seed}")
    passage = CORPUS[retrieval]
    if "Canberra" in passage:
        answer = rng.choice(CORRECT)
    else:
        # A stale index usually misleads the model; now and then it still knows the answer.
        answer = rng.choice(WRONG) if rng.random() < 0.9 else CORRECT[0]
    tokens = len(passage.split()) * (3 if model == "large" else 2) + rng.randint(0, 5)
    return RunResult(
        output=answer,
        manifest={"retrieval": retrieval, "model": model},
        cost={"tokens": tokens},
    )
