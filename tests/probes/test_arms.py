"""rule 8 refusals and facet normalisation."""

from __future__ import annotations

import pytest

from counterfact import ConfigError, RefusalError
from counterfact.probes.arms import ArmSpec, check_arms, flatten_facets, nest_facets


def test_nested_and_dotted_facets_mean_the_same_leaves() -> None:
    nested = flatten_facets({"retrieval": {"kind": "rerank", "top_k": 3}})
    dotted = flatten_facets({"retrieval.kind": "rerank", "retrieval.top_k": 3})
    mixed = flatten_facets({"retrieval": {"kind": "rerank"}, "retrieval.top_k": 3})
    assert nested == dotted == mixed == {"retrieval.kind": "rerank", "retrieval.top_k": 3}


def test_nest_inverts_flatten() -> None:
    assert nest_facets({"a.b": 1, "a.c": 2, "d": 3}) == {"a": {"b": 1, "c": 2}, "d": 3}


def test_leaf_declared_twice_is_an_error() -> None:
    with pytest.raises(ConfigError, match=r"arms\[1\]\.facets: facet 'a.b' is declared twice"):
        flatten_facets({"a": {"b": 1}, "a.b": 2}, field="arms[1].facets")


def test_leaf_and_prefix_clash_is_an_error() -> None:
    with pytest.raises(ConfigError, match=r"'a' is both a value and the parent of 'a\.b'"):
        flatten_facets({"a": 1, "a.b": 2})


def test_empty_key_segment_is_an_error() -> None:
    with pytest.raises(ConfigError, match="empty segment"):
        flatten_facets({"a..b": 1})


def _arm(arm_id: str, **facets: object) -> ArmSpec:
    return ArmSpec(id=arm_id, facets=facets)


def test_fewer_than_two_arms_refused() -> None:
    with pytest.raises(RefusalError, match="arms: a sweep needs at least two arms"):
        check_arms([_arm("base")], "base")


def test_blank_id_refused() -> None:
    with pytest.raises(RefusalError, match=r"arms\[1\]\.id: arm id is blank"):
        check_arms([_arm("base"), _arm("  ", x=1)], "base")


def test_duplicate_id_refused() -> None:
    with pytest.raises(
        RefusalError, match=r"arms\[2\]\.id: arm id 'b' is already used by arms\[1\]"
    ):
        check_arms([_arm("base"), _arm("b", x=1), _arm("b", x=2)], "base")


def test_unknown_baseline_refused() -> None:
    with pytest.raises(
        RefusalError, match="baseline: baseline 'nope' is not an arm id; known arms"
    ):
        check_arms([_arm("base"), _arm("b", x=1)], "nope")


def test_challenger_declaring_nothing_refused() -> None:
    with pytest.raises(RefusalError, match=r"arms\[1\]: challenger arm 'b' declares nothing"):
        check_arms([_arm("base", x=0), _arm("b")], "base")


def test_baseline_may_declare_nothing_a_challenger_may_not() -> None:
    check_arms([_arm("base"), _arm("b", x=1)], "base")  # accepted: raises nothing
    with pytest.raises(RefusalError, match="challenger arm 'base' declares nothing"):
        check_arms([_arm("base"), _arm("b", x=1)], "b")


def test_same_configuration_refused_regardless_of_key_and_ablation_order() -> None:
    a = ArmSpec(id="a", facets={"x": 1, "y": [1, 2]}, ablations=("t1", "t2"))
    b = ArmSpec(id="b", facets={"y": [1, 2], "x": 1}, ablations=("t2", "t1"))
    with pytest.raises(
        RefusalError, match=r"arms\[2\]: arm 'b' has the same configuration as arms\[1\]"
    ):
        check_arms([_arm("base"), a, b], "base")


def test_different_values_are_different_arms_equal_ones_are_not() -> None:
    check_arms([_arm("base"), _arm("a", x=1), _arm("b", x=2)], "base")  # accepted
    with pytest.raises(RefusalError, match=r"arm 'b' has the same configuration as arms\[1\]"):
        check_arms([_arm("base"), _arm("a", x=1), _arm("b", x=1)], "base")


def test_view_nests_facets_for_the_runner() -> None:
    view = ArmSpec(id="a", facets={"r.kind": "bm25"}, ablations=("tool:search",)).view()
    assert view.facets == {"r": {"kind": "bm25"}}
    assert view.ablations == ("tool:search",)


def test_a_list_valued_facet_is_an_ordered_value() -> None:
    # rule 8: [rerank, filter] is not [filter, rerank].
    a = ArmSpec(id="a", facets={"steps": ["rerank", "filter"]})
    b = ArmSpec(id="b", facets={"steps": ["filter", "rerank"]})
    check_arms([_arm("base"), a, b], "base")  # accepted: two different arms
    assert a.canonical() != b.canonical()


def test_a_facet_without_a_leaf_declares_nothing() -> None:
    # rule 8: {memory: {}} holds no leaf.
    empty = ArmSpec(id="b", facets={"memory": {}})
    assert empty.declares_nothing
    with pytest.raises(RefusalError, match="challenger arm 'b' declares nothing"):
        check_arms([_arm("base"), empty], "base")


def test_an_empty_mapping_adds_nothing_to_a_configuration() -> None:
    base = ArmSpec(id="base", facets=flatten_facets({"model": "small"}))
    same = ArmSpec(id="b", facets=flatten_facets({"model": "small", "memory": {}}))
    assert same.facets == {"model": "small"}
    with pytest.raises(RefusalError, match="same configuration"):
        check_arms([base, same], "base")
