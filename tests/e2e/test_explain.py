"""Records that explain (issue 11 item 4): what answers changed to, facet diffs, roll-ups and
diagnostics that name their cause."""

from __future__ import annotations

from counterfact import RunContext, RunResult, compare_arms

from ..conftest import scripted

ARMS = [
    {"id": "base", "facets": {"prompt": "v1", "retrieval": {"k": 3}}},
    {"id": "prompt=v2", "facets": {"prompt": "v2", "retrieval": {"k": 3}}},
]


def _answers(ctx: RunContext) -> str:
    if ctx.arm.id == "base":
        return "Canberra"
    return "Sydney" if ctx.seed % 3 else "Melbourne"


def _sweep() -> object:
    return compare_arms(
        ARMS,
        scripted({"base": _answers, "prompt=v2": _answers}),
        samples=6,
        scenarios=[{"id": "q1", "reference": "Canberra"}, {"id": "q2", "reference": "Canberra"}],
        comparator="contains",
        executor="local",
    )


def test_changed_to_lists_the_most_common_flipped_outputs_with_seeds() -> None:
    row = _sweep().row("prompt=v2", "q1")  # type: ignore[attr-defined]
    assert [(c.output, c.count, c.seeds) for c in row.changed_to] == [
        ("Sydney", 4, [1, 2, 4, 5]),
        ("Melbourne", 2, [0, 3]),
    ]
    assert row.facets_diff == {"prompt": ["v1", "v2"]}
    assert "changed the answer" in row.claim  # contains is answer-level


def test_rollup_across_scenarios_in_summary_and_table() -> None:
    result = _sweep()
    (rolled,) = result.summary.rollup  # type: ignore[attr-defined]
    assert rolled.arm == "prompt=v2" and rolled.verdicts == {"confirmed": 2}
    assert rolled.summary.startswith("prompt=v2: confirmed on 2 of 2 scenarios")
    assert "across scenarios:\n  prompt=v2: confirmed on 2 of 2 scenarios" in result.table()  # type: ignore[attr-defined]


def test_manifest_mismatches_are_counted_per_run() -> None:
    def ignores_prompt(ctx: RunContext) -> RunResult:
        return RunResult(output="Canberra", manifest={"prompt": "v1", "retrieval": {"k": 3}})

    result = compare_arms(ARMS, ignores_prompt, samples=5, reference="Canberra", executor="local")
    row = result.row("prompt=v2")
    assert row.reason == "arm-not-applied"
    assert "(mismatched in 5 of 5 manifests)" in row.claim
    assert row.application.manifests_mismatched == 5


def test_a_reference_the_baseline_never_gives_is_named() -> None:
    result = compare_arms(
        ARMS,
        scripted({"base": "Canberra", "prompt=v2": "Canberra"}),
        samples=4,
        reference="Canbera",
        comparator="exact",
        executor="local",
    )
    claim = result.row("prompt=v2").claim
    assert "differs from the reference on every one of its 4 seeds" in claim
    assert "the reference may not match" in claim and "instability" not in claim


def test_no_cost_class_without_a_successful_run() -> None:
    def runner(ctx: RunContext) -> RunResult:
        if ctx.arm.ablations:
            raise RuntimeError("tool missing")
        return RunResult(output="ok", cost={"loops": 3.0})

    result = compare_arms(
        [{"id": "base"}, {"id": "no-search", "ablations": ["tool:search"]}],
        runner,
        samples=3,
        reference="ok",
        executor="local",
    )
    row = result.row("no-search")
    assert row.samples == 0 and row.cost_class is None
