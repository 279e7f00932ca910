"""A small, seeded quiz agent for ``configs/mixed_checks.yaml``: six questions of five kinds
(a number, a multiple choice, free text, a fixed format, a yes/no), each judged by its own check.

What it reads from the arm's facets: ``prompt``, ``careful`` (default) or ``hurried``. A careful
prompt answers right in varied words; a hurried one answers wrong three times in four (a rounded
number, two options at once, another letter, a capital ``Yes``) and right otherwise.
"""

from __future__ import annotations

import random

from counterfact import RunContext

ANSWERS: dict[str, tuple[list[str], list[str]]] = {
    # question id: (careful answers, hurried wrong answers)
    "pi": (["3.14", "It is about 3.14.", "3.143, so 3.14"], ["3.1", "Roughly 3."]),
    "metres": (["2500", "2,500 metres", "That is 2500 m."], ["250 metres", "25000"]),
    "planet": (
        ["Jupiter", "Jupiter is the largest.", "The answer: Jupiter."],
        ["Jupiter or Mars, I think.", "Mars"],
    ),
    "capital": (
        ["The capital is Canberra.", "Canberra, in the ACT."],
        ["Sydney.", "It is Sydney, the largest city."],
    ),
    "letter": (
        ["Answer: C", "answer: c", "Let me think. Answer: C"],
        ["Answer: D", "D. Answer: D"],
    ),
    "prime": (["yes"], ["Yes", "yes."]),
}


def run(ctx: RunContext) -> str:
    careful, wrong = ANSWERS[ctx.scenario.id]
    prompt = ctx.arm.facets.get("prompt", "careful")
    rng = random.Random(f"{ctx.scenario.id}/{prompt}/{ctx.seed}")
    if prompt == "hurried" and rng.random() < 0.75:
        return rng.choice(wrong)
    return rng.choice(careful)
