"""rule 5: the null band."""

from __future__ import annotations

from counterfact.probes.null_band import build_null_band


def test_floor_is_the_minimum() -> None:
    band = build_null_band([0.9, 0.85, 0.95], gates=True)
    assert band is not None
    assert band.floor == 0.85
    assert not band.degenerate


def test_degenerate_is_value_equality_not_float_stdev() -> None:
    same = build_null_band([0.7, 0.7, 0.7], gates=True)
    assert same is not None and same.degenerate
    # 0.1 + 0.2 != 0.3 as floats: the values differ, so the band is not degenerate even though
    # their stdev is ~1e-17.
    almost = build_null_band([0.1 + 0.2, 0.3, 0.3], gates=True)
    assert almost is not None and not almost.degenerate


def test_outside_is_strictly_below_the_floor() -> None:
    band = build_null_band([0.8, 0.9], gates=True)
    assert band is not None
    assert band.outside(0.79)
    assert not band.outside(0.8)


def test_gates_is_carried_and_empty_baseline_has_no_band() -> None:
    band = build_null_band([1.0, 1.0], gates=False)
    assert band is not None and not band.gates
    assert build_null_band([], gates=True) is None
