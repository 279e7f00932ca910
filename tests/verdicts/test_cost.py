"""rule 11: cost verdicts, gate by gate."""

from __future__ import annotations

from counterfact.probes.stats import CostStats
from counterfact.verdicts.cost import CostItem, cost_class, cost_readings


def cost(median: float, max_: float | None = None, **other: float) -> dict[str, CostStats]:
    out = {
        "loops": CostStats(
            median=median, min=median, max=max_ if max_ is not None else median, reported=3
        )
    }
    for key, value in other.items():
        out[key] = CostStats(median=value, min=value, max=value, reported=3)
    return out


BASE = cost(6.0, tokens=1000.0)


def test_cost_cause_beats_the_placebo_band() -> None:
    items = [
        CostItem("cause", False, cost(2.0, 3.0, tokens=400.0)),  # saves 4 loops
        CostItem("p1", False, cost(5.0)),  # saves 1
        CostItem("p2", False, cost(6.0)),  # saves 0
    ]
    r = cost_readings(items, BASE, "loops")["cause"]
    assert r is not None
    assert r.saved == {"loops": 4.0, "tokens": 600.0}
    assert r.placebo == (1.0, 0.0)
    assert (r.consistent, r.stable, r.cost_cause) == (True, True, True)


def test_placebo_gate_saved_must_exceed_band_max() -> None:
    items = [CostItem("a", False, cost(4.0)), CostItem("b", False, cost(4.0))]
    readings = cost_readings(items, BASE, "loops")
    # Each saves 2, but so does its placebo peer: not separable from benign variance.
    assert readings["a"] is not None and readings["a"].cost_cause is False
    assert readings["a"].placebo == (2.0,)


def test_placebo_is_leave_one_out_and_excludes_confirmed() -> None:
    items = [
        CostItem("a", False, cost(2.0)),
        CostItem("confirmed", True, cost(0.0)),  # saves 6 but its answer changed: not a placebo
        CostItem("p", False, cost(5.0)),
    ]
    r = cost_readings(items, BASE, "loops")["a"]
    assert r is not None and r.placebo == (1.0,) and r.cost_cause


def test_stability_gate_needs_every_rerun_at_or_below_baseline_median() -> None:
    items = [CostItem("a", False, cost(2.0, 7.0)), CostItem("p", False, cost(6.0))]
    r = cost_readings(items, BASE, "loops")["a"]
    assert r is not None
    assert (r.consistent, r.stable, r.cost_cause) == (False, False, False)


def test_max_equal_to_baseline_median_is_consistent() -> None:
    items = [CostItem("a", False, cost(2.0, 6.0)), CostItem("p", False, cost(6.0))]
    r = cost_readings(items, BASE, "loops")["a"]
    assert r is not None and r.consistent and r.cost_cause


def test_no_placebo_band_is_not_stable() -> None:
    r = cost_readings([CostItem("only", False, cost(1.0))], BASE, "loops")["only"]
    assert r is not None
    assert r.placebo == () and r.consistent and not r.stable and not r.cost_cause


def test_missing_cost_data() -> None:
    items = [
        CostItem("none", False, None),
        CostItem("no-loops", False, {"tokens": CostStats(900.0, 900.0, 900.0, 3)}),
        CostItem("p", False, cost(6.0)),
    ]
    readings = cost_readings(items, BASE, "loops")
    assert readings["none"] is None
    r = readings["no-loops"]
    assert r is not None
    assert r.saved == {"loops": None, "tokens": 100.0}
    assert not r.consistent and not r.cost_cause
    # An item without the judged key is not in anyone's placebo band.
    assert readings["p"] is not None and readings["p"].placebo == ()


def test_baseline_without_cost() -> None:
    r = cost_readings(
        [CostItem("a", False, cost(1.0)), CostItem("p", False, cost(1.0))], None, "loops"
    )["a"]
    assert r is not None and r.saved == {"loops": None} and not r.cost_cause


def test_negative_savings_are_never_a_cause() -> None:
    items = [CostItem("a", False, cost(9.0)), CostItem("p", False, cost(8.0))]
    r = cost_readings(items, BASE, "loops")["a"]
    assert r is not None and r.saved["loops"] == -3.0
    assert not r.cost_cause


def test_saved_must_be_at_least_one() -> None:
    items = [CostItem("a", False, cost(5.5)), CostItem("p", False, cost(7.0))]
    r = cost_readings(items, BASE, "loops")["a"]
    assert r is not None and r.saved["loops"] == 0.5 and r.placebo == (-1.0,)
    assert not r.cost_cause


def test_other_cost_key() -> None:
    base = {"trees": CostStats(100.0, 100.0, 100.0, 3)}
    items = [
        CostItem("a", False, {"trees": CostStats(40.0, 30.0, 50.0, 3)}),
        CostItem("p", False, {"trees": CostStats(95.0, 90.0, 99.0, 3)}),
    ]
    r = cost_readings(items, base, "trees")["a"]
    assert r is not None and r.cost_cause and r.saved == {"trees": 60.0}


def test_the_four_classes() -> None:
    items = [CostItem("a", False, cost(1.0)), CostItem("p", False, cost(6.0))]
    cause = cost_readings(items, BASE, "loops")["a"]
    assert cost_class(True, cause) == "both"
    assert cost_class(True, None) == "content-bug"
    assert cost_class(False, cause) == "cost-cause"
    assert cost_class(False, None) == "no-detected-effect"
