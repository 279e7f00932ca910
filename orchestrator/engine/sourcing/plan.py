"""The plan: every (scenario, arm, seed) a sweep must run, as runner contexts, in the order
they are handed to the executor.

Runs of one (question, arm) send the same prompt, and a model server keeps the prompt it last
saw cached (llama.cpp's one prefix per slot, vLLM's prefix caching, hosted prompt caching): so
those runs go out together, :data:`SEED_BLOCK` seeds at a time. Each question starts with seed 0
of every arm, one after another (a runner that cannot work is noticed after one run per arm,
:mod:`~counterfact.orchestrator.engine.stopping.failwatch`), then its other seeds in blocks, the
arms interleaved block by block. So a sweep cut short (a budget, Ctrl-C, the failure watch) leaves
the arms' seeds differing on at most one block of one question, and every arm's block of a
question runs within moments of the others' (a drifting service touches all arms alike). Which
seeds ran depends only on their place in the plan, never on an outcome, and only seeds both arms
ran are paired, so a cut cannot bias a paired comparison.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from counterfact.probes.arms import ArmSpec
from counterfact.probes.runner import RunContext
from counterfact.probes.scenarios import ScenarioSpec

SEED_BLOCK = 8
"""Seeds of one (question, arm) handed out one after another before the next arm's."""


def seed_blocks(samples: int, block: int | None = None) -> Iterator[range]:
    """Seeds ``0 .. samples-1`` as handed out per question: seed 0 alone, then consecutive
    blocks of ``block`` (:data:`SEED_BLOCK`).
    """
    size = SEED_BLOCK if block is None else block
    if samples > 0:
        yield range(1)
    for start in range(1, samples, size):
        yield range(start, min(start + size, samples))


def build_plan(
    scenarios: Sequence[ScenarioSpec],
    arms: Sequence[ArmSpec],
    samples: int,
    block: int | None = None,
) -> list[RunContext]:
    """Contexts ordered scenario, then block of seeds (:func:`seed_blocks`), then arm, then
    seed (module docstring). ``block=1`` is the order before blocks: scenario, seed, arm.
    """
    views = [a.view() for a in arms]
    plan: list[RunContext] = []
    for sc in scenarios:
        scenario = sc.view()
        for seeds in seed_blocks(samples, block):
            plan.extend(
                RunContext(scenario=scenario, arm=arm, seed=s) for arm in views for s in seeds
            )
    return plan
