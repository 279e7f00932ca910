from __future__ import annotations

import math

import pytest

from counterfact import RunnerReturnError, RunResult
from counterfact.probes.runner import coerce_result


def test_string_becomes_output() -> None:
    assert coerce_result("hi") == RunResult(output="hi")


def test_mapping_with_manifest_and_cost() -> None:
    got = coerce_result({"output": "a", "manifest": {"m": 1}, "cost": {"tokens": 3}})
    assert got.manifest == {"m": 1}
    assert got.cost == {"tokens": 3.0}


def test_run_result_passes_through_checks() -> None:
    with pytest.raises(RunnerReturnError, match="output must be a str, got int"):
        coerce_result(RunResult(output=5))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (42, "runner returned int; return a str"),
        (None, "runner returned NoneType"),
        ({"answer": "x"}, r"unknown keys \['answer'\]"),
        ({"manifest": {}}, "without 'output'"),
        ({"output": b"bytes"}, "output must be a str, got bytes"),
        ({"output": "x", "manifest": ["a"]}, "manifest must be a mapping, got list"),
        ({"output": "x", "cost": 3}, "cost must be a mapping"),
        ({"output": "x", "cost": {"usd": "1"}}, "cost 'usd' must be a number, got str"),
        ({"output": "x", "cost": {"usd": True}}, "cost 'usd' must be a number, got bool"),
        ({"output": "x", "cost": {"usd": math.nan}}, "cost 'usd' must be finite"),
        ({"output": "x", "cost": {"usd": math.inf}}, "cost 'usd' must be finite"),
        ({"output": "x", "cost": {"usd": -math.inf}}, "cost 'usd' must be finite"),
        ({"output": "x", "cost": {"usd": -20}}, "cost 'usd' must not be negative, got -20"),
        ({"output": "x", "cost": {"tokens": -0.5}}, "cost 'tokens' must not be negative"),
    ],
)
def test_broken_returns_are_named(value: object, match: str) -> None:
    with pytest.raises(RunnerReturnError, match=match):
        coerce_result(value)


def test_a_cost_too_large_for_any_total_fails_the_run() -> None:
    # a server's usage of 1e308 tokens: two such runs summed to inf and poisoned every total
    with pytest.raises(
        RunnerReturnError, match=r"runner cost 'tokens' is 1e\+308, more than 1e\+15"
    ):
        coerce_result({"output": "x", "cost": {"tokens": 1e308}})
    assert coerce_result({"output": "x", "cost": {"tokens": 1e15}}).cost == {"tokens": 1e15}
