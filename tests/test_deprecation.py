"""The three declared relocations: each old path still works until 0.2.0, and warns."""

from __future__ import annotations

import importlib

import pytest

from counterfact.deprecation import REMOVED_IN

RELOCATED = [
    ("counterfact.probes.records", "RunRecord", "counterfact.records.runs"),
    ("counterfact.probes.records", "RUN_SCHEMA_VERSION", "counterfact.records.runs"),
    ("counterfact.verdicts.seedsets", "unpack", "counterfact.records.seedsets"),
    ("counterfact.verdicts.seedsets", "SEED_LIST_MAX", "counterfact.records.seedsets"),
    ("counterfact.verdicts.records", "VerdictRecord", "counterfact.records.verdicts"),
    ("counterfact.verdicts.records", "SweepSummary", "counterfact.records.summary"),
    ("counterfact.verdicts.records", "BisectRecord", "counterfact.records.bisect"),
    ("counterfact.verdicts.records", "TestRecord", "counterfact.records.parts"),
    ("counterfact.verdicts.records", "Family", "counterfact.records.vocabulary"),
]


@pytest.mark.parametrize(("old", "name", "new"), RELOCATED)
def test_an_old_path_warns_and_gives_the_same_object(old: str, name: str, new: str) -> None:
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=rf"{new}\.{name}.*{REMOVED_IN}") as caught:
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(new), name)
    assert caught[0].filename == __file__  # the warning points at the importer, not at us


def test_from_import_warns_too() -> None:
    with pytest.warns(DeprecationWarning, match="counterfact.records.runs.RunError"):
        from counterfact.probes.records import RunError
    from counterfact.records.runs import RunError as Canonical

    assert RunError is Canonical


@pytest.mark.parametrize(
    "old",
    ["counterfact.probes.records", "counterfact.verdicts.records", "counterfact.verdicts.seedsets"],
)
def test_a_name_that_never_lived_there_is_an_attribute_error(old: str) -> None:
    module = importlib.import_module(old)
    with pytest.raises(AttributeError, match=f"module '{old}' has no attribute 'Nope'"):
        module.Nope  # noqa: B018


def test_every_relocated_name_resolves() -> None:
    # The tables in the three modules name only modules and names that exist.
    from counterfact.verdicts import records

    for module, names in records._MOVED_TO.items():
        for name in names:
            with pytest.warns(DeprecationWarning, match=rf"moved to {module}\.{name};"):
                value = getattr(records, name)
            assert value is getattr(importlib.import_module(module), name)
