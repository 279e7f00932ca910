"""Fingerprints: what a run directory's records mean, and which changes a resume refuses."""

from __future__ import annotations

import json

from counterfact.orchestrator.storage.fingerprints import fingerprint
from counterfact.probes.arms import ArmSpec
from counterfact.probes.scenarios import ScenarioSpec
from counterfact.records.fingerprint import (
    Fingerprint,
    SequentialDesign,
    canonical_json,
    differences,
    merged,
)


def test_fingerprint_ignores_ids_order_and_holds_configuration() -> None:
    arms = [ArmSpec("a", {"m": "x", "k": 1}, ("t2", "t1")), ArmSpec("b", {})]
    fp = fingerprint("r@sha256:00", arms, [ScenarioSpec("s", {"q": [1, 2]}, "ref")])
    assert fp.runner == "r@sha256:00"
    assert fp.arms["a"] == {
        "ablations": ["t1", "t2"],
        "facets": {"k": 1, "m": "x"},
        "restorations": [],
    }
    assert fp.scenarios == {"s": {"q": [1, 2]}}  # the reference is not part of the meaning


def test_added_arms_are_no_difference_changed_ones_are() -> None:
    old = Fingerprint(runner="r", arms={"a": {"x": 1}}, scenarios={"s": {}})
    grown = Fingerprint(runner="r", arms={"a": {"x": 1}, "b": {}}, scenarios={"s": {}, "t": {}})
    assert differences(old, grown) == []
    changed = Fingerprint(runner="r", arms={"a": {"x": 2}}, scenarios={"s": {"q": 1}})
    assert differences(old, changed) == [
        "arms[a].x: 1 → 2",
        "scenarios[s].inputs.q: null → 1",
    ]


def test_merged_keeps_removed_arms_protected() -> None:
    old = Fingerprint(runner="r", arms={"a": {}, "gone": {"x": 1}}, scenarios={"s": {}})
    new = Fingerprint(runner="r", arms={"a": {}}, scenarios={"s": {}})
    assert set(merged(old, new).arms) == {"a", "gone"}


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
        assert canonical_json(fp.scenarios["s"]) == canonical_json(
            json.loads(canonical_json(inputs))
        )


def test_a_changed_design_and_runner_files_are_named() -> None:
    design = SequentialDesign(samples=8, wave=8, alpha=0.05, arms=["a", "b"])
    old = Fingerprint(runner="r+files:1", runner_files={"d.csv": "1"}, sequential=design)
    wider = SequentialDesign(samples=8, wave=16, alpha=0.05, arms=["a", "b"])
    new = Fingerprint(runner="r+files:2", runner_files={"d.csv": "2"}, sequential=wider)
    assert differences(old, new) == [
        "runner_files[d.csv]: edited (1 → 2)",
        "sequential design (its stopping decisions depend on it): wave: 8 -> 16",
    ]


def test_an_owner_is_kept_and_the_file_reads_back_the_same() -> None:
    # sweep.json as a run store writes it: the first owner, the schema version, unset fields
    # left out; reading it back gives the same fingerprint (keys this version does not know kept)
    old = Fingerprint(kind="sweep", name="first", runner="r", arms={"a": {}})
    written = merged(old, Fingerprint(kind="sweep", name="second", runner="r", arms={"b": {}}))
    data = written.as_data()
    assert data == {
        "kind": "sweep",
        "name": "first",
        "runner": "r",
        "arms": {"a": {}, "b": {}},
        "scenarios": {},
        "schema_version": 1,
    }
    assert Fingerprint.model_validate(data | {"later": 1}).as_data() == data | {"later": 1}
