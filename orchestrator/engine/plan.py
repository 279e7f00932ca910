"""The plan: every (scenario, arm, seed) a sweep must run, as runner contexts."""

from __future__ import annotations

from collections.abc import Sequence

from counterfact.probes.arms import ArmSpec
from counterfact.probes.runner import RunContext
from counterfact.probes.scenarios import ScenarioSpec


def build_plan(
    scenarios: Sequence[ScenarioSpec], arms: Sequence[ArmSpec], samples: int
) -> list[RunContext]:
    """Contexts ordered scenario, then seed, then arm: partial results stay paired by seed."""
    views = [a.view() for a in arms]
    plan: list[RunContext] = []
    for sc in scenarios:
        scenario = sc.view()
        for seed in range(samples):
            plan.extend(RunContext(scenario=scenario, arm=arm, seed=seed) for arm in views)
    return plan
