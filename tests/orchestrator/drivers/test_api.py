"""compare_arms: the Python entry point, on the in-process executor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from counterfact import ConfigError, RunContext, RunResult, compare_arms, load_sweep

from ...conftest import TESTS, scripted


def test_callable_runner_one_row_per_arm() -> None:
    runner = scripted({"base": "yes", "alt": "no", "same": "yes"})
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"m": 1}}, {"id": "same", "facets": {"m": 2}}],
        runner,
        samples=4,
        reference="yes",
        comparator="exact",
        executor="local",
    )
    assert [r.arm for r in result.rows] == ["base", "alt", "same"]
    assert result.row("alt").verdict == "confirmed"
    assert result.row("same").verdict == "not-confirmed"
    assert result.row("alt").cost is not None and result.row("alt").cost["tokens"].median == 11.5
    assert result.summary.execution.runs_used == 12 and result.run_dir is None
    assert "confirmed" in result.table()


def test_string_runner_relative_to_base_dir(tmp_path: Path) -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"answer": "nope"}}],
        "runners.py:echo_arm",
        base_dir=TESTS,
        executor="local",
        out=tmp_path / "o",
    )
    assert result.row("alt").reason == "majority-flip"
    assert result.summary.scenarios[0].reference.from_ == "baseline-arm"
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["config"]["runner"] == "runners.py:echo_arm"


def test_custom_comparator_and_similarity_callables() -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"m": 1}}],
        scripted({"base": "10", "alt": "12"}),
        reference="10",
        comparator=lambda ref, out: abs(int(out) - int(ref)) > 1,
        similarity=lambda ref, outs: [1.0 if o == ref else 0.5 for o in outs],
        executor="local",
    )
    assert result.row("alt").verdict == "confirmed"
    assert result.row("alt").similarity is not None and result.row("alt").similarity.mean == 0.5
    assert result.summary.config["comparator"]["kind"] == "custom"


def test_minority_flip_with_numeric_comparator() -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"m": 1}}],
        scripted({"base": "answer 42", "alt": ["42", "41.9", "40"]}),
        reference="42",
        comparator={"kind": "numeric", "tolerance": 0.5},
        executor="local",
    )
    assert (result.row("alt").verdict, result.row("alt").flips) == ("inconclusive", 1)
    assert result.row("alt").reason == "minority-flip"


def test_multi_scenario_rows_and_row_lookup() -> None:
    def runner(ctx: RunContext) -> str:
        return str(ctx.scenario.inputs["q"]) + ("!" if ctx.arm.facets.get("loud") else "")

    result = compare_arms(
        [{"id": "base"}, {"id": "loud", "facets": {"loud": True}}],
        runner,
        scenarios=[{"id": "s1", "inputs": {"q": "a"}}, {"id": "s2", "inputs": {"q": "b"}}],
        comparator="exact",
        executor="local",
    )
    assert len(result.rows) == 4
    assert result.row("loud", "s2").verdict == "confirmed"
    with pytest.raises(KeyError, match="2 match"):
        result.row("loud")


def test_bad_arguments_raise_config_error_before_running() -> None:
    calls: list[int] = []

    def runner(ctx: RunContext) -> str:
        calls.append(ctx.seed)
        return "x"

    with pytest.raises(ConfigError, match="samples must be at least 2"):
        compare_arms(
            [{"id": "a"}, {"id": "b", "facets": {"x": 1}}], runner, samples=1, executor="local"
        )
    with pytest.raises(ConfigError, match="challenger arm 'b' declares nothing"):
        compare_arms([{"id": "a"}, {"id": "b"}], runner, executor="local")
    assert calls == []


def test_unstable_baseline_makes_everything_inconclusive() -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"m": 1}}],
        scripted({"base": ["yes", "no", "yes"], "alt": "no"}),
        reference="yes",
        comparator="exact",
        executor="local",
    )
    assert (result.row("alt").verdict, result.row("alt").reason) == (
        "inconclusive",
        "unstable-baseline",
    )
    assert result.summary.scenarios[0].baseline_stable is False


def test_compare_arms_takes_any_file_key_and_file_targets(tmp_path: Path) -> None:
    (tmp_path / "checks.py").write_text(
        "def flipped(reference, output):\n    return output != reference\n", encoding="utf-8"
    )
    result = compare_arms(
        [{"id": "base", "facets": {"model": "small"}}],
        scripted_by_model,
        reference="small answer",
        comparator="checks.py:flipped",
        grid={"model": ["small", "large"]},
        cost_key="tokens",
        base_dir=tmp_path,
        executor="local",
    )
    assert [r.arm for r in result.rows] == ["base", "model=large"]
    assert result.row("model=large").verdict == "confirmed"
    assert result.summary.config["cost_key"] == "tokens"
    with pytest.raises(ConfigError, match="did you mean 'ablate_each'"):
        compare_arms([{"id": "base"}], scripted_by_model, ablate_eachh=["tool:x"])


def test_load_sweep_accepts_a_mapping(tmp_path: Path) -> None:
    sweep = load_sweep(
        {
            "name": "m",
            "runner": "runners.py:echo_arm",
            "arms": [{"id": "a"}, {"id": "b", "facets": {"x": 1}}],
        },
        base_dir=TESTS,
        overrides=["samples=4"],
        executor="local",
    )
    assert sweep.config.samples == 4 and sweep.config.executor.kind == "local"
    assert sweep.overrides == ("samples=4", "--executor local")


def test_to_frame_flattens_rows() -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"answer": "no"}}],
        "runners.py:echo_arm",
        samples=5,
        reference="yes",
        comparator="exact",
        base_dir=TESTS,
        executor="local",
    )
    frame = result.to_frame()
    assert list(frame["arm"]) == ["base", "alt"] and len(frame) == len(result.rows)
    alt = frame.set_index("arm").loc["alt"]
    assert alt["test.p_value"] == pytest.approx(result.row("alt").test.p_value)  # type: ignore[union-attr]
    assert alt["facets_diff.answer"] == [None, "no"]


def scripted_by_model(ctx: RunContext) -> RunResult:
    return RunResult(output=f"{ctx.arm.facets.get('model', 'small')} answer", cost={"tokens": 1.0})


def test_api_warns_on_notes_and_refuses_keys_it_cannot_use() -> None:
    from counterfact.exceptions import CounterfactWarning

    arms = [{"id": "base", "facets": {"model": "small"}}, {"id": "b", "facets": {"modle": "x"}}]
    with pytest.warns(CounterfactWarning, match="did you mean 'model'"):
        compare_arms(arms, scripted_by_model, reference="small answer", executor="local")
    with pytest.raises(ConfigError, match="output_dir: compare_arms does not use"):
        compare_arms(arms, scripted_by_model, executor="local", output_dir="x")
