"""rule 6: the manifest check."""

from __future__ import annotations

from counterfact.probes.manifest import check_application, check_manifest


def test_only_declared_facets_are_compared() -> None:
    assert check_manifest({"retrieval": "bm25"}, {"retrieval": "bm25", "model": "x"}) == []


def test_dotted_path_into_nested_manifest() -> None:
    assert check_manifest({"retrieval.kind": "rerank"}, {"retrieval": {"kind": "rerank"}}) == []
    (m,) = check_manifest({"retrieval.kind": "rerank"}, {"retrieval": {"kind": "bm25"}})
    assert (m.facet, m.declared, m.observed) == ("retrieval.kind", "rerank", "bm25")


def test_absence_is_a_mismatch_without_observed_value() -> None:
    (m,) = check_manifest({"retrieval.kind": "rerank"}, {"model": "x"})
    assert m.facet == "retrieval.kind"
    assert not m.observed_present


def test_explicit_null_is_observed() -> None:
    (m,) = check_manifest({"window": 8}, {"window": None})
    assert m.observed_present and m.observed is None


def test_bool_is_not_one() -> None:
    assert len(check_manifest({"flag": True}, {"flag": 1})) == 1
    assert check_manifest({"n": 1}, {"n": 1.0}) == []


def test_list_of_mappings_needs_one_element_satisfying_all_leaves() -> None:
    manifest = {"tools": [{"name": "search", "on": False}, {"name": "calc", "on": True}]}
    assert check_manifest({"tools.name": "calc", "tools.on": True}, manifest) == []
    # Each leaf holds in some element, but no single element holds both: one prefix mismatch.
    (m,) = check_manifest({"tools.name": "search", "tools.on": True}, manifest)
    assert m.facet == "tools"
    assert m.declared == {"name": "search", "on": True}
    assert m.observed == manifest["tools"]


def test_every_run_must_agree_and_mismatches_are_deduplicated() -> None:
    app = check_application(
        {"retrieval": "rerank"},
        [{"retrieval": "rerank"}, {"retrieval": "bm25"}, {"retrieval": "bm25"}, {}],
    )
    assert app.checked and app.applied is False
    assert app.manifests_seen == 4
    assert [(m.facet, m.observed_present) for m in app.mismatches] == [
        ("retrieval", True),
        ("retrieval", False),
    ]


def test_unchecked_without_manifests_or_without_facets() -> None:
    no_manifest = check_application({"retrieval": "rerank"}, [None, None])
    assert (no_manifest.checked, no_manifest.applied, no_manifest.manifests_seen) == (
        False,
        None,
        0,
    )
    no_facets = check_application({}, [{"retrieval": "x"}])
    assert not no_facets.checked


def test_all_manifests_agreeing_is_applied() -> None:
    app = check_application({"a.b": 1}, [{"a": {"b": 1}}, None, {"a": {"b": 1, "c": 2}}])
    assert app.checked and app.applied and app.manifests_seen == 2


def test_empty_or_mixed_list_is_one_prefix_mismatch_with_observed() -> None:
    (m,) = check_manifest({"tools.name": "search", "tools.k": 5}, {"tools": []})
    assert (m.facet, m.declared, m.observed) == ("tools", {"name": "search", "k": 5}, [])
    (n,) = check_manifest({"tools.name": "x"}, {"tools": ["x", {"name": "y"}]})
    assert n.facet == "tools" and n.observed_present
    assert check_manifest({"tools.name": "x"}, {"tools": ["junk", {"name": "x"}]}) == []


def test_a_facet_left_out_is_unreported_not_contradicted() -> None:
    app = check_application(
        {"model": "x", "temperature": 0.2}, [{"model": "x"}, {"model": "x", "temperature": 0.2}]
    )
    assert app.applied is False and app.unreported and app.manifests_contradicted == 0
    assert [(m.facet, m.declared) for m in app.unreported_facets] == [("temperature", 0.2)]


def test_one_reported_other_value_makes_the_check_contradicted() -> None:
    # Left out on seed 0, another value on seed 1: the arm did not take effect.
    app = check_application({"temperature": 0.2}, [{}, {"temperature": 0.7}])
    assert app.applied is False and not app.unreported and app.manifests_contradicted == 1
    assert [m.facet for m in app.unreported_facets] == ["temperature"]


def test_a_manifest_that_lists_parts_proves_a_removal_or_refutes_it() -> None:
    from counterfact.probes.manifest import ManifestLog

    log = ManifestLog({}, removed=("m1.p2", "m0"))
    assert log.add(0, {"parts": ["m1.p0", "m1.p1", "m1.p3"]}) == []
    found = log.add(1, {"parts": ["m0.p0", "m1.p2"]})  # m0.p0 sits inside the removed m0
    assert [(m.facet, m.observed) for m in found] == [("parts", ["m0.p0", "m1.p2"])]
    app = log.application()
    assert app.checked and app.applied is False and app.manifests_mismatched == 1


def test_without_a_parts_list_or_a_removal_nothing_is_checked() -> None:
    from counterfact.probes.manifest import ManifestLog

    log = ManifestLog({}, removed=("tool:search",))
    log.add(0, {"tools": ["calculator"]})  # a runner that lists no parts: rule 9 as before
    assert not log.application().checked
    assert not ManifestLog({}).application().checked
