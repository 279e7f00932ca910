"""The amended rules 6 and 11: the baseline's own manifest gate, no cost class under failed runs
or an unstable baseline, cost readings that say over how many runs they were taken."""

from __future__ import annotations

from counterfact import RunContext, compare_arms


def test_a_baseline_that_did_not_take_effect_makes_every_verdict_inconclusive() -> None:
    def runner(ctx: RunContext) -> dict[str, object]:
        # The baseline asks for model "small" but the program ran "large"; the arm is honest.
        model = "large" if ctx.arm.id == "base" else ctx.arm.facets["model"]
        return {"output": "no" if ctx.arm.id == "alt" else "yes", "manifest": {"model": model}}

    result = compare_arms(
        [{"id": "base", "facets": {"model": "small"}}, {"id": "alt", "facets": {"model": "tiny"}}],
        runner,
        samples=5,
        reference="yes",
        comparator="exact",
        executor="local",
    )
    alt = result.row("alt")
    assert (alt.verdict, alt.reason) == ("inconclusive", "baseline-not-applied")
    assert (
        "the baseline 'base' declared model='small', but its run manifests reported 'large'"
        in alt.claim
    )


def ablation_runner(ctx: RunContext) -> dict[str, object]:
    if "tool:b" in ctx.arm.ablations and ctx.seed == 1:
        raise RuntimeError("tool b's removal crashed this run")
    loops = 10 - 3 * ("tool:a" in ctx.arm.ablations)
    return {"output": "yes", "cost": {"loops": loops}}


def test_no_cost_class_with_failed_runs_and_the_record_says_why() -> None:
    arms = [{"id": "base"}] + [{"id": f"w{t}", "ablations": [f"tool:{t}"]} for t in "abc"]
    result = compare_arms(
        arms, ablation_runner, samples=4, reference="yes", comparator="exact", executor="local"
    )
    crashed = result.row("wb")
    assert crashed.reason == "runs-failed" and crashed.cost_class is None
    assert crashed.cost_class_withheld == "runs-failed"
    fine = result.row("wa")
    assert fine.cost_class == "cost-cause" and fine.cost_class_withheld is None
    assert fine.cost_reading is not None and fine.cost_reading.reported == 4
    assert fine.cost is not None and fine.cost["loops"].reported == 4


def test_no_cost_class_under_an_unstable_baseline() -> None:
    def runner(ctx: RunContext) -> dict[str, object]:
        wrong = ctx.arm.id == "base" and ctx.seed == 2
        return {"output": "no" if wrong else "yes", "cost": {"loops": 5}}

    result = compare_arms(
        [{"id": "base"}, {"id": "wa", "ablations": ["tool:a"]}],
        runner,
        samples=4,
        reference="yes",
        comparator="exact",
        executor="local",
    )
    wa = result.row("wa")
    assert wa.reason == "unstable-baseline" and wa.cost_class is None
    assert wa.cost_class_withheld == "unstable-baseline"
