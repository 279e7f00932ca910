"""What a check read from data may say (:mod:`counterfact.orchestrator.config.trust`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from counterfact.exceptions import CodeInDataError, ConfigError
from counterfact.orchestrator.config.checks import CheckBuilder
from counterfact.orchestrator.config.components import ComparatorConfig
from counterfact.orchestrator.config.trust import custom_target, data_check

NAMES = {"same_city": "mychecks.py:same_city"}


@pytest.mark.parametrize(
    "raw",
    [
        "os:popen",
        "evil.py:boom",
        {"kind": "custom", "target": "os:system"},
        {"kind": "custom", "target": "nowhere"},
        {"kind": "exact", "target": "builtins:eval"},  # a target on any kind is refused too
        {"kind": "custom", "target": 7},
    ],
)
def test_a_data_check_that_names_code_is_refused_with_the_fix(raw: object) -> None:
    with pytest.raises(CodeInDataError, match=r"names code.*checks: \{my_check.*same_city$"):
        data_check(raw, NAMES, where="set.jsonl: line 3: ", field="scenarios.file")


def test_the_refusal_names_the_row_and_the_field() -> None:
    with pytest.raises(CodeInDataError) as caught:
        data_check("os:popen", {}, where="set.csv: row 4: ", field="scenarios.file")
    assert str(caught.value).startswith("scenarios.file: set.csv: row 4: expect: 'os:popen'")
    assert caught.value.field == "scenarios.file"
    assert "declared checks: none" in str(caught.value)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("same_city", {"kind": "custom", "target": "same_city"}),
        ({"kind": "custom", "target": "same_city"}, {"kind": "custom", "target": "same_city"}),
        ("contains", "contains"),
        ({"kind": "numeric", "tolerance": 0.1}, {"kind": "numeric", "tolerance": 0.1}),
    ],
)
def test_built_in_kinds_and_declared_names_pass(raw: object, expected: object) -> None:
    assert data_check(raw, NAMES, where="", field="f") == expected


def test_a_bare_word_that_is_no_kind_and_no_check_says_both_lists() -> None:
    with pytest.raises(ConfigError, match=r"'lenient' is neither a comparator kind \(contains"):
        data_check("lenient", NAMES, where="", field="f")


def test_a_trusted_target_stands_and_an_untrusted_one_must_be_declared() -> None:
    assert custom_target("same_city", NAMES, trusted=False, field="f") == "mychecks.py:same_city"
    assert custom_target("mine.py:check", NAMES, trusted=True, field="f") == "mine.py:check"
    with pytest.raises(CodeInDataError, match=r"'mine\.py:check' names code"):
        custom_target("mine.py:check", NAMES, trusted=False, field="f")


def test_the_builder_never_imports_an_untrusted_target(tmp_path: Path) -> None:
    """The second line: a data check that reached the builder is still not imported."""
    (tmp_path / "evil.py").write_text(
        "import pathlib\npathlib.Path(__file__).with_name('PWNED').write_text('x')\n"
        "def boom(r, o):\n    return True\n"
    )
    builder = CheckBuilder(tmp_path, {})
    config = ComparatorConfig(kind="custom", target="evil.py:boom")
    with pytest.raises(CodeInDataError):
        builder.build(config, "scenarios.file (scenario 'q0').expect", trusted=False)
    assert not (tmp_path / "PWNED").exists()
    builder.build(config, "scenarios[0].expect", trusted=True)  # the sweep file's: imported
    assert (tmp_path / "PWNED").exists()


def test_declared_checks_are_imported_once_and_unused_ones_listed(tmp_path: Path) -> None:
    (tmp_path / "mychecks.py").write_text(
        "import pathlib\n"
        "p = pathlib.Path(__file__).with_name('imports')\n"
        "p.write_text(p.read_text() + 'x' if p.exists() else 'x')\n"
        "def same(r, o):\n    return r != o\n"
    )
    builder = CheckBuilder(tmp_path, {"a": "mychecks.py:same", "b": "mychecks.py:same"})
    builder.load_declared()
    first = builder.build(ComparatorConfig(kind="custom", target="a"), "q0", trusted=False)
    again = builder.build(ComparatorConfig(kind="custom", target="a"), "q1", trusted=False)
    assert first is again
    assert builder.unused() == ["b"]
    assert (tmp_path / "imports").read_text() == "x"  # the file ran once for both names
