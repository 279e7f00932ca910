"""The order runs are handed out: runs sharing a prompt (one question and arm) together, a block
of seeds at a time, arms interleaved per block within each question (issue 41)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from counterfact import RunContext, compare_arms
from counterfact.orchestrator.engine.sourcing.plan import SEED_BLOCK, build_plan
from counterfact.probes.arms import ArmSpec
from counterfact.probes.scenarios import ScenarioSpec

ARMS = [{"id": "base"}, {"id": "alt", "facets": {"m": 2}}, {"id": "third", "facets": {"m": 3}}]
SEEDS = SEED_BLOCK + 3  # seed 0, a whole block and a partial one


def _order(seeds: range, arms: list[str], questions: list[str]) -> list[tuple[str, str, int]]:
    """Per question: seed 0 of every arm, then blocks of ``SEED_BLOCK`` seeds per arm."""
    blocks = [seeds[:1], *(seeds[i : i + SEED_BLOCK] for i in range(1, len(seeds), SEED_BLOCK))]
    return [(q, a, s) for q in questions for b in blocks for a in arms for s in b]


def test_the_in_process_executor_calls_runs_in_blocks_of_seeds_per_arm(tmp_path: Path) -> None:
    """Runs sharing a prompt go out together; seed 0 of every arm first, as before, so the
    failure watch still stops a runner that cannot work after one run per arm."""
    called: list[tuple[str, str, int]] = []

    def runner(ctx: RunContext) -> str:
        called.append((ctx.scenario.id, ctx.arm.id, ctx.seed))
        return "yes"

    compare_arms(
        ARMS,
        runner,
        samples=SEEDS,
        scenarios=[{"id": q, "inputs": {}, "reference": "yes"} for q in ("q0", "q1")],
        comparator="exact",
        executor="local",
        out=tmp_path / "o",
    )
    assert called == _order(range(SEEDS), ["base", "alt", "third"], ["q0", "q1"])


def _specs() -> tuple[list[ScenarioSpec], list[ArmSpec]]:
    scenarios = [ScenarioSpec(f"q{i}", {}, "yes") for i in range(3)]
    return scenarios, [ArmSpec(a["id"], a.get("facets", {})) for a in ARMS]


def test_a_cut_anywhere_leaves_arms_apart_on_one_block_of_one_question() -> None:
    """A budget or Ctrl-C stops handing runs out at some point of the plan: before it, every
    question but one has the same seeds in every arm, and that one differs by at most a block."""
    scenarios, arms = _specs()
    plan = build_plan(scenarios, arms, SEEDS)
    for cut in range(len(plan) + 1):
        ran = Counter((c.scenario.id, c.arm.id) for c in plan[:cut])
        spread = {
            q.id: max(ran[(q.id, a.id)] for a in arms) - min(ran[(q.id, a.id)] for a in arms)
            for q in scenarios
        }
        apart = [q for q, gap in spread.items() if gap]
        assert len(apart) <= 1 and max(spread.values()) <= SEED_BLOCK, cut


def test_block_one_is_the_order_seed_then_arm() -> None:
    scenarios, arms = _specs()
    plan = build_plan(scenarios[:1], arms, 3, block=1)
    assert [(c.arm.id, c.seed) for c in plan] == [(a.id, s) for s in range(3) for a in arms]


def test_the_first_wave_of_a_sequential_sweep_is_handed_out_in_the_same_order(
    tmp_path: Path,
) -> None:
    called: list[tuple[str, str, int]] = []

    def runner(ctx: RunContext) -> str:
        called.append((ctx.scenario.id, ctx.arm.id, ctx.seed))
        return "yes"

    compare_arms(
        ARMS[:2],
        runner,
        samples=SEEDS,
        scenarios=[{"id": "q0", "inputs": {}, "reference": "yes"}],
        comparator="exact",
        executor="local",
        sequential={"max_samples": 2 * SEEDS, "wave": 2},
        out=tmp_path / "o",
    )
    assert called[: 2 * SEEDS] == _order(range(SEEDS), ["base", "alt"], ["q0"])
