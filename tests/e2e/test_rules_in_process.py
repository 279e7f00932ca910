"""rules 10 and 11 end to end on the in-process executor, with scripted runners.

The pure search and cost reading are tested clause by clause in tests/verdicts; here the same
situations go through the real engine (find_culprits / run_sweep on the local executor), and
``runs_used`` is checked against the runner's own call count.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from counterfact import RunContext, find_culprits
from counterfact.orchestrator.config.loading import validate_config
from counterfact.orchestrator.config.resolve import resolve_sweep
from counterfact.orchestrator.drivers.sweep import run_sweep

from ..conftest import TESTS

Fixed = Callable[[frozenset[str], int], bool]


class Program:
    """Answers 'wrong' unless ``fixed(ablated ids, seed)``; counts its calls."""

    def __init__(self, fixed: Fixed) -> None:
        self.fixed = fixed
        self.calls = 0

    def __call__(self, ctx: RunContext) -> str:
        self.calls += 1
        return "right" if self.fixed(frozenset(ctx.arm.ablations), ctx.seed) else "wrong"


def needs(*ids: str) -> Fixed:
    return lambda ablated, seed: set(ids) <= ablated


def any_of(*ids: str) -> Fixed:
    return lambda ablated, seed: bool(set(ids) & ablated)


CASES = [
    # id, suspects, program, options, verdict, culprits, executed probes
    ("single", list("abcd"), needs("c"), {}, "confirmed", [["c"]], 6),
    ("joint", ["x", "a", "b", "y"], needs("x", "y"), {}, "confirmed", [["x", "y"]], None),
    ("independent", ["a", "c", "b", "d"], any_of("a", "b"), {}, "confirmed", [["a"], ["b"]], None),
    ("interference", ["x", "y"], needs("x", "y"), {}, "confirmed", [["x", "y"]], 4),
    (
        "three-way",
        ["x", "a", "y", "b", "z", "c"],
        needs("x", "y", "z"),
        {},
        "confirmed",
        [["x", "y", "z"]],
        None,
    ),
    ("ranked-last", list("abcde"), needs("e"), {}, "confirmed", [["e"]], None),
    ("not-reproducible", list("ab"), lambda a, s: False, {}, "not-reproducible", [], 2),
    ("unstable-baseline", list("ab"), lambda a, s: bool(a) or s == 1, {}, "inconclusive", [], 1),
    ("budget-exact", list("abcd"), needs("c"), {"max_probes": 6}, "confirmed", [["c"]], 6),
    # {c} is found with the 5th probe: the budget runs out looking for more, and {c} is kept.
    ("budget-one-short", list("abcd"), needs("c"), {"max_probes": 5}, "confirmed", [["c"]], 5),
    ("budget-short-of-any", list("abcd"), needs("c"), {"max_probes": 4}, "inconclusive", [], 4),
    ("cache-hit", list("abc"), needs("c"), {}, "confirmed", [["c"]], 4),
    (
        "max-culprits",
        list("abcd"),
        any_of("a", "b", "c"),
        {"max_culprits": 2},
        "confirmed",
        [["a"], ["b"]],
        None,
    ),
]


@pytest.mark.parametrize(
    ("suspects", "fixed", "options", "verdict", "culprits", "executed"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_bisect_on_the_engine(
    suspects: list[str],
    fixed: Fixed,
    options: dict[str, int],
    verdict: str,
    culprits: list[list[str]],
    executed: int | None,
) -> None:
    program = Program(fixed)
    rec = find_culprits(
        suspects, program, reference="wrong", comparator="exact", executor="local", **options
    ).record
    assert (rec.verdict, rec.culprits) == (verdict, culprits)
    assert rec.execution.runs_used == program.calls == 3 * rec.probes_executed
    if executed is not None:
        assert rec.probes_executed == executed
    cached = [p for p in rec.probes if p.cached]
    assert len(rec.probes) == rec.probes_executed + len(cached)


def cost_program(
    loops: dict[str, list[float]], bad: set[str]
) -> Callable[[RunContext], dict[str, object]]:
    """Per ablated id, the loops its runs use (by seed); 'wrong' unless a `bad` id is ablated."""

    def run(ctx: RunContext) -> dict[str, object]:
        ablated = set(ctx.arm.ablations)
        key = next(iter(ablated), "baseline")
        output = "right" if ablated & bad else "wrong"
        cost: dict[str, float] = {"tokens": 100.0}
        if key in loops:
            cost["loops"] = loops[key][ctx.seed]
        return {"output": output, "cost": cost}

    return run


def sweep(
    loops: dict[str, list[float]], ids: list[str], bad: set[str] = frozenset()
) -> dict[str, object]:  # type: ignore[assignment]
    raw = {
        "name": "cost",
        "runner": cost_program(loops, set(bad)),
        "reference": "wrong",
        "comparator": {"kind": "exact"},
        "executor": {"kind": "local"},
        "ablate_each": ids,
    }
    result = run_sweep(resolve_sweep(validate_config(raw), base_dir=TESTS), run_dir=None)
    return {r.arm.removeprefix("without:"): r for r in result.rows}


BASE = [6.0, 6.0, 6.0]


def test_cost_cause_clears_the_placebo_band() -> None:
    rows = sweep(
        {"baseline": BASE, "slow": [2, 3, 2], "p1": [5, 6, 5], "p2": [6, 6, 6]},
        ["slow", "p1", "p2"],
    )
    slow = rows["slow"]
    assert slow.cost_reading.saved["loops"] == 4.0 and slow.cost_reading.placebo_max == 1.0  # type: ignore[union-attr]
    assert slow.cost_class == "cost-cause"


def test_placebo_gate_on_the_engine() -> None:
    rows = sweep({"baseline": BASE, "a": [4, 4, 4], "b": [4, 4, 4]}, ["a", "b"])
    assert rows["a"].cost_class == rows["b"].cost_class == "no-detected-effect"


def test_stability_gate_on_the_engine() -> None:
    rows = sweep({"baseline": BASE, "a": [1, 1, 7], "p": [6, 6, 6]}, ["a", "p"])
    reading = rows["a"].cost_reading
    assert reading is not None and reading.saved["loops"] == 5.0 and not reading.consistent
    assert rows["a"].cost_class == "no-detected-effect"


def test_no_placebo_band_on_the_engine() -> None:
    rows = sweep({"baseline": BASE, "a": [1, 1, 1]}, ["a"])
    reading = rows["a"].cost_reading
    assert reading is not None and reading.placebo_band == [] and not reading.stable
    assert rows["a"].cost_class == "no-detected-effect"


def test_missing_cost_data_on_the_engine() -> None:
    rows = sweep({"baseline": BASE, "p": [6, 6, 6]}, ["nokey", "p"])
    reading = rows["nokey"].cost_reading
    assert reading is not None and reading.saved == {"loops": None, "tokens": 0.0}
    assert rows["nokey"].cost_class == "no-detected-effect"


def test_negative_savings_on_the_engine() -> None:
    rows = sweep({"baseline": BASE, "a": [9, 9, 9], "p": [6, 6, 6]}, ["a", "p"])
    assert rows["a"].cost_reading.saved["loops"] == -3.0  # type: ignore[union-attr]
    assert rows["a"].cost_class == "no-detected-effect"


def test_four_classes_on_the_engine() -> None:
    loops = {
        "baseline": BASE,
        "both": [1, 1, 1],
        "bug": [6, 6, 6],
        "slow": [2, 2, 2],
        "p": [6, 6, 6],
    }
    rows = sweep(loops, ["both", "bug", "slow", "p"], bad={"both", "bug"})
    assert rows["both"].cost_class == "both"
    assert rows["bug"].cost_class == "content-bug"
    assert rows["slow"].cost_class == "cost-cause"
    assert rows["p"].cost_class == "no-detected-effect"
