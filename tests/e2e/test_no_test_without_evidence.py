"""No test without evidence, whichever tier decides (issue 20 item 5): an arm whose manifests
show it did not take effect gets no p-value in any row, and the pooled test, the roll-up and the
family adjustment leave it out and say so."""

from __future__ import annotations

from counterfact import RunContext, RunResult, compare_arms

SCENARIOS = [{"id": f"s{i}", "reference": "A"} for i in range(3)]
ARMS = [
    {"id": "base", "facets": {"retrieval": "bm25"}},
    {"id": "dense", "facets": {"retrieval": "dense"}},
    {"id": "rerank", "facets": {"retrieval": "bm25", "k": 3}},
]


def run(ctx: RunContext) -> RunResult:
    """The program ignores 'dense' (it always runs bm25, and says so) yet answers differently on
    it every time: on a scripted case like this the pooled test once called 'dense' significant.
    The baseline flips on seed 1 of every scenario, so unstable-baseline is decided first."""
    manifest = {"retrieval": "bm25", **({"k": 3} if "k" in ctx.arm.facets else {})}
    flips = ctx.arm.id == "dense" or (ctx.arm.id == "base" and ctx.seed == 1)
    flips = flips or (ctx.arm.id == "rerank" and ctx.seed % 2 == 0)
    return RunResult(output="B" if flips else "A", manifest=manifest)


def test_a_not_applied_arm_gets_no_test_and_is_left_out_of_the_pooled_test() -> None:
    result = compare_arms(
        ARMS, run, samples=12, scenarios=SCENARIOS, comparator="exact", executor="local"
    )
    dense = [r for r in result.rows if r.arm == "dense"]
    assert {r.reason for r in dense} == {"unstable-baseline"}  # the tier decided first ...
    for row in dense:  # ... and still no test: its runs are not evidence about 'dense'
        assert row.test is None and row.statistical_verdict is None
        assert row.statistical_verdict_withheld == "arm-not-applied"
        assert row.effect is None
    assert [p.arm for p in result.summary.pooled] == ["rerank"]
    rerank = [r for r in result.rows if r.arm == "rerank"]
    for row in rerank:  # the family holds the rerank tests only
        assert row.test is not None and row.test.adjustment is not None
        assert row.test.adjustment.family_size == 3
    rollup = {r.arm: r for r in result.summary.rollup}
    assert rollup["dense"].withheld == 3 and rollup["dense"].tested == 0
    assert "test withheld on 3" in result.table()
