"""ablate_each and grid expansions, and ablation sweeps end to end with cost classes."""

from __future__ import annotations

from pathlib import Path

import pytest

from counterfact import ConfigError, RefusalError, RunContext, load_sweep
from counterfact.orchestrator.config.resolve import resolve_sweep
from counterfact.orchestrator.config.schema import SweepConfig
from counterfact.orchestrator.drivers.sweep import run_sweep

from ...conftest import TESTS, write_config
from ...helpers import after_standing

HEAD = f"name: x\nrunner: {TESTS / 'runners.py'}:echo_arm\nexecutor: {{kind: local}}\n"


def test_ablate_each_adds_leave_one_out_arms_beside_implicit_baseline(tmp_path: Path) -> None:
    sweep = load_sweep(write_config(tmp_path, HEAD + "ablate_each: [tool:a, fact:b]\n"))
    assert [a.id for a in sweep.arms] == ["baseline", "without:tool:a", "without:fact:b"]
    assert sweep.arms[1].ablations == ("tool:a",)
    assert sweep.baseline == "baseline"


def test_ablate_each_builds_on_the_declared_baseline(tmp_path: Path) -> None:
    text = HEAD + "arms: [{id: prod, facets: {m: 1}, ablations: [old]}]\nablate_each: [new]\n"
    sweep = load_sweep(write_config(tmp_path, text))
    assert sweep.arms[1].facets == {"m": 1}
    assert sweep.arms[1].ablations == ("old", "new")


def test_ablate_each_refusals(tmp_path: Path) -> None:
    with pytest.raises(
        RefusalError, match=r"ablate_each\[1\]: ablation id 'a' is already used by ablate_each\[0\]"
    ):
        load_sweep(write_config(tmp_path, HEAD + "ablate_each: [a, a]\n"))
    text = HEAD + "arms: [{id: prod, ablations: [a]}]\nablate_each: [a]\n"
    with pytest.raises(RefusalError, match=r"ablate_each\[0\]: 'a' is already ablated"):
        load_sweep(write_config(tmp_path, text))


def test_arm_id_clash_names_both_origins(tmp_path: Path) -> None:
    text = HEAD + "arms: [{id: base}, {id: 'without:a', facets: {z: 1}}]\nablate_each: [a]\n"
    with pytest.raises(
        RefusalError, match=r"ablate_each\[0\]\.id: arm id 'without:a' is already used by arms\[1\]"
    ):
        load_sweep(write_config(tmp_path, text))


def test_grid_one_arm_per_combination_with_readable_ids(tmp_path: Path) -> None:
    text = HEAD + (
        "arms: [{id: base, facets: {model: small, k: 3}}]\n"
        "grid: {model: [small, large], k: [3, 5]}\n"
    )
    sweep = load_sweep(write_config(tmp_path, text))
    assert [a.id for a in sweep.arms] == [
        "base",
        "model=small,k=5",
        "model=large,k=3",
        "model=large,k=5",
    ]
    assert sweep.arms[3].facets == {"model": "large", "k": 5}
    assert sweep.skipped == ("model=small,k=3",)


def test_grid_dotted_paths_merge_into_nested_facets(tmp_path: Path) -> None:
    text = (
        HEAD
        + "arms: [{id: base, facets: {retrieval: {kind: bm25, k: 3}}}]\ngrid: {retrieval.kind: [dense]}\n"
    )
    sweep = load_sweep(write_config(tmp_path, text))
    assert sweep.arms[1].facets == {"retrieval.kind": "dense", "retrieval.k": 3}
    assert sweep.arms[1].view().facets == {"retrieval": {"kind": "dense", "k": 3}}


def test_grid_empty_axis(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"grid\.model: a grid axis needs at least one value"):
        load_sweep(write_config(tmp_path, HEAD + "grid: {model: []}\n"))


def program(ctx: RunContext) -> dict[str, object]:
    """Wrong answer while 'fact:bad' is present; 'fact:slow' costs loops; others are neutral."""
    abl = set(ctx.arm.ablations)
    loops = 2.0 if "fact:slow" in abl else 6.0
    if "fact:both" in abl:
        return {"output": "right", "cost": {"loops": 1.0}}
    output = "right" if "fact:bad" in abl else "wrong"
    return {"output": output, "cost": {"loops": loops + (1.0 if "fact:noise" in abl else 0.0)}}


def test_ablation_sweep_verdicts_and_cost_classes() -> None:
    config = SweepConfig.model_validate(
        {
            "name": "abl",
            "runner": program,
            "reference": "wrong",
            "comparator": {"kind": "exact"},
            "executor": {"kind": "local"},
            "ablate_each": ["fact:bad", "fact:slow", "fact:both", "fact:neutral", "fact:noise"],
        }
    )
    sweep = run_sweep(resolve_sweep(config, base_dir=TESTS), run_dir=None)
    rows = {r.arm: r for r in sweep.rows}
    assert rows["baseline"].cost_class is None and rows["baseline"].intervention == "baseline"
    bad = rows["without:fact:bad"]
    assert (bad.intervention, bad.verdict, bad.cost_class) == (
        "ablation",
        "confirmed",
        "content-bug",
    )
    assert after_standing(bad.claim).startswith(
        "Confirmed: removing 'fact:bad' changed the output on 3 of 3"
    )
    slow = rows["without:fact:slow"]
    assert (slow.verdict, slow.cost_class) == ("not-confirmed", "cost-cause")
    assert slow.cost_reading is not None and slow.cost_reading.saved == {"loops": 4.0}
    assert slow.cost_reading.placebo_band == [0.0, -1.0] and slow.cost_reading.placebo_max == 0.0
    assert rows["without:fact:both"].cost_class == "both"
    assert rows["without:fact:neutral"].cost_class == "no-detected-effect"
    assert rows["without:fact:noise"].cost_reading.saved == {"loops": -1.0}  # type: ignore[union-attr]
    table = sweep.table()
    assert "cost class" in table.splitlines()[0]
    assert any(
        "cost-cause" in line.split()[-4:] for line in table.splitlines() if "fact:slow" in line
    )
