"""The scikit-learn example end to end on a real Ray instance (needs the `examples` extra)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from counterfact.orchestrator.cli import main

from ..conftest import TESTS

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("ray_instance")]

CONFIG = TESTS.parent / "configs" / "breast_cancer.yaml"


def test_bisect_sees_the_models_seeds_split_and_claims_no_culprit_it_cannot_test(
    tmp_path: Path,
) -> None:
    """Under the old default (majority) this search claimed {concave points} from 4 of 5 seeds;
    the seeds split, so ``decide: auto`` turns to the paired test, which 5 seeds cannot pass at
    alpha / max_culprits (issue 39 item 1: noise must not be claimed, let alone as sure)."""
    out = tmp_path / "b"
    result = CliRunner().invoke(main, ["bisect", str(CONFIG), "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    data = json.loads((out / "bisect.json").read_text())
    assert (data["verdict"], data["reason"], data["culprits"]) == (
        "inconclusive",
        "underpowered",
        [],
    )
    assert (data["decide_asked"], data["decide"]) == ("auto", "test")
    assert ["group:concave points"] in data["noise_seen"] and data["samples_needed"] == 7
    assert "The test ran no probe of its own" in data["claim"]
    assert data["probes"][0]["ablated"] == [] and data["probes"][0]["flips"] == 0
    runs = (out / "runs.jsonl").read_text().splitlines()
    assert data["execution"]["runs_used"] == len(runs) == 5 * data["probes_executed"]


def test_ablation_sweep_verdicts_and_cost_classes(tmp_path: Path) -> None:
    out = tmp_path / "s"
    result = CliRunner().invoke(main, ["run", str(CONFIG), "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    rows = {v["arm"]: v for v in map(json.loads, (out / "verdicts.jsonl").read_text().splitlines())}
    assert len(rows) == 11
    concave = rows["without:group:concave points"]
    assert (concave["verdict"], concave["cost_class"]) == ("confirmed", "content-bug")
    texture = rows["without:group:texture"]
    assert (texture["verdict"], texture["cost_class"]) == ("not-confirmed", "cost-cause")
    assert texture["cost_reading"]["saved"]["loops"] > texture["cost_reading"]["placebo_max"]
    others = [r for a, r in rows.items() if a not in {"baseline", concave["arm"], texture["arm"]}]
    assert {r["cost_class"] for r in others} == {"no-detected-effect"}
