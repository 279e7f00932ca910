"""The README's ablation runner, extracted from the README and run as written (issue 11)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from counterfact import apply_ablations, find_culprits
from counterfact.probes.runner import ArmView

from ..conftest import TESTS

README = TESTS.parent / "README.md"


def _readme_agent(folder: Path) -> Path:
    text = README.read_text(encoding="utf-8")
    found = re.search(r"<!-- tested: readme_agent\.py -->\n```python\n(.*?)```", text, re.S)
    assert found, "the README's tested ablation example is missing"
    path = folder / "readme_agent.py"
    path.write_text(found.group(1), encoding="utf-8")
    return path


@pytest.mark.parametrize("executor", ["local", pytest.param("ray", marks=pytest.mark.ray)])
def test_mixed_tool_and_fact_bisection_finds_both_culprits(
    tmp_path: Path, executor: str, request: pytest.FixtureRequest
) -> None:
    if executor == "ray":
        request.getfixturevalue("ray_instance")
    agent = _readme_agent(tmp_path)
    outcome = find_culprits(
        ["tool:calculator", "fact:f2", "tool:search", "fact:f1"],
        f"{agent}:run",
        samples=3,
        reference="Canberra",
        comparator="exact",
        executor=executor,
    )
    assert outcome.record.verdict == "confirmed", outcome.record.claim
    assert sorted(map(sorted, outcome.record.culprits)) == [["fact:f1"], ["tool:search"]]


def test_each_call_checks_only_its_namespace() -> None:
    arm = ArmView("a", {}, ablations=("tool:search", "fact:f1"))
    assert apply_ablations(["tool:search", "tool:calc"], arm) == ["tool:calc"]
    assert apply_ablations(["fact:f1", "fact:f2"], arm) == ["fact:f2"]


def test_a_typo_in_the_namespace_of_the_call_still_raises_with_a_suggestion() -> None:
    arm = ArmView("a", {}, ablations=("tool:serch", "fact:f1"))
    with pytest.raises(ValueError, match=r"did you mean 'tool:search' for 'tool:serch'"):
        apply_ablations(["tool:search", "tool:calc"], arm)


def test_an_id_no_call_checks_fails_the_run() -> None:
    # 'tols:search' belongs to neither the tool: nor the fact: call: it would remove nothing
    from counterfact.orchestrator.engine.calling.worker import execute_run
    from counterfact.probes.runner import RunContext, ScenarioView

    def run(ctx: RunContext) -> str:
        apply_ablations(["tool:search"], ctx.arm)
        apply_ablations(["fact:f1"], ctx.arm)
        return "ok"

    arm = ArmView("a", {}, ablations=("tols:search",))
    record = execute_run(run, RunContext(ScenarioView("s", {}), arm, 0))
    assert record.error is not None and record.error.type == "AblationNotApplied"
    assert "did you mean 'tool:search'?" in record.error.message

    def own_way(ctx: RunContext) -> str:  # never calls apply_ablations: not second-guessed
        return "ok"

    assert execute_run(own_way, RunContext(ScenarioView("s", {}), arm, 0)).ok
