"""A tiny run of scripts/calibrate_judge.py (A/A sweeps judged by a noisy loopback judge), so the
script cannot rot: the full run writes docs/statistics.md's "A/A false alarms with a noisy model
judge"; here two sweeps go through the same engine path.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.standin import StandIn

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def script() -> ModuleType:
    sys.path.insert(0, str(ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location(
        "calibrate_judge", ROOT / "scripts" / "calibrate_judge.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["calibrate_judge"] = module  # dataclasses look their module up while defined
    spec.loader.exec_module(module)
    return module


def test_two_noisy_aa_sweeps_are_counted(
    script: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGE_KEY", "none")
    cell = script.Cell()
    with StandIn(median_s=0.0005, p95_s=0.001, answer=script.noisy_judge(0.3, "test")) as api:
        for _ in range(2):
            script.one_sweep(api, cell, questions=4, seeds=5, error=0.3)
        # every output its own words: each of the 2 x 4 x 2 x 5 outputs is one judge call
        assert api.stats.served >= 80
    assert cell.sweeps == 2 and cell.rows == 8 and cell.samples == 80
    assert 0 < cell.flips < cell.samples  # the judge erred on some calls, not on all
    assert 0 <= cell.confirmed <= cell.sweeps and cell.rechecked >= 0
