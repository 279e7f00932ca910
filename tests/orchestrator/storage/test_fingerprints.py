"""Fingerprints: what a run directory's records mean, and which changes a resume refuses."""

from __future__ import annotations

import json

from counterfact.orchestrator.storage.fingerprints import (
    canonical_json,
    differences,
    fingerprint,
    merged,
)
from counterfact.probes.arms import ArmSpec
from counterfact.probes.scenarios import ScenarioSpec


def test_fingerprint_ignores_ids_order_and_holds_configuration() -> None:
    arms = [ArmSpec("a", {"m": "x", "k": 1}, ("t2", "t1")), ArmSpec("b", {})]
    fp = fingerprint("r@sha256:00", arms, [ScenarioSpec("s", {"q": [1, 2]}, "ref")])
    assert fp["runner"] == "r@sha256:00"
    assert fp["arms"]["a"] == {
        "ablations": ["t1", "t2"],
        "facets": {"k": 1, "m": "x"},
        "restorations": [],
    }
    assert fp["scenarios"] == {"s": {"q": [1, 2]}}  # the reference is not part of the meaning


def test_added_arms_are_no_difference_changed_ones_are() -> None:
    old = {"runner": "r", "arms": {"a": {"x": 1}}, "scenarios": {"s": {}}}
    grown = {"runner": "r", "arms": {"a": {"x": 1}, "b": {}}, "scenarios": {"s": {}, "t": {}}}
    assert differences(old, grown) == []
    changed = {"runner": "r", "arms": {"a": {"x": 2}}, "scenarios": {"s": {"q": 1}}}
    assert differences(old, changed) == [
        "arms[a].x: 1 → 2",
        "scenarios[s].inputs.q: null → 1",
    ]


def test_merged_keeps_removed_arms_protected() -> None:
    old = {"runner": "r", "arms": {"a": {}, "gone": {"x": 1}}, "scenarios": {"s": {}}}
    new = {"runner": "r", "arms": {"a": {}}, "scenarios": {"s": {}}}
    assert set(merged(old, new)["arms"]) == {"a", "gone"}


def test_canonical_json_sorts_keys_and_is_compact() -> None:
    assert canonical_json({"b": 1, "a": [2, {"d": 1, "c": 0}]}) == '{"a":[2,{"c":0,"d":1}],"b":1}'


def test_scenario_inputs_read_as_json_would_read_them_back() -> None:
    # the flat fast path (10^6 scenarios validated in seconds) and the round trip agree
    cases = [
        {"q": "x", "n": 3, "f": 0.1, "b": True, "none": None},
        {"q": [1, 2], "m": {"k": "v"}},
        {1: "int key"},
        {"nan": float("nan")},
    ]
    for inputs in cases:
        fp = fingerprint("r", [], [ScenarioSpec("s", inputs, None)])
        assert canonical_json(fp["scenarios"]["s"]) == canonical_json(
            json.loads(canonical_json(inputs))
        )
