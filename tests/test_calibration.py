"""A small calibration run (fixed seeds, few sweeps) of scripts/calibrate.py's simulation.

The full run (2,000 sweeps per cell) writes docs/statistics.md; here a few cells are rerun with
300 sweeps so the suite notices if the test's A/A error rate or its power regress.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def calibrate() -> ModuleType:
    sys.path.insert(0, str(ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location("calibrate", ROOT / "scripts" / "calibrate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["calibrate"] = module  # dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("seed0", [False, True])
@pytest.mark.parametrize(("samples", "flip"), [(3, 0.5), (10, 0.3), (20, 0.5)])
def test_the_tests_aa_rate_is_within_alpha(
    calibrate: ModuleType, samples: int, flip: float, seed0: bool
) -> None:
    sig, _ = calibrate.aa_cell(
        300, samples, flip, seeded=False, seed0=seed0, pairing="seed", seed=7
    )
    assert sig.low <= 0.05  # the Clopper-Pearson interval of the A/A rate reaches alpha


def test_the_tiers_false_confirm_where_the_test_does_not(calibrate: ModuleType) -> None:
    # 3 samples, unseeded, reference = baseline seed 0, flip rate 0.5: the tiers' known weakness.
    sig, conf = calibrate.aa_cell(1000, 3, 0.5, seeded=False, seed0=True, pairing="seed", seed=3)
    assert sig.hits == 0 and conf.hits / conf.n > 0.08


def test_power_grows_with_samples(calibrate: ModuleType) -> None:
    small, _ = calibrate.power_cell(300, 5, 0.1, 0.8, seed=1)
    large, tiers = calibrate.power_cell(300, 20, 0.1, 0.8, seed=1)
    assert small.hits / small.n < 0.5 < 0.95 <= large.hits / large.n
    assert tiers.hits / tiers.n < 0.3  # the majority rule with zero tolerance loses power


def test_holm_keeps_the_family_wise_rate(calibrate: ModuleType) -> None:
    holm = calibrate.family_cell(300, 10, 0.3, 10, "holm", seed=5)
    none = calibrate.family_cell(300, 10, 0.3, 10, "none", seed=5)
    assert holm.low <= 0.05 and holm.hits <= none.hits
