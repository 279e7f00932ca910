"""Config files: schema errors name the field path and the fix; refusals run nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from counterfact import ConfigError, RefusalError, RunnerImportError, load_sweep

from ...conftest import TESTS, write_config

RUNNER = f"{TESTS / 'runners.py'}:echo_arm"

GOOD = f"""
name: good
runner: {RUNNER}
arms:
  - id: base
  - id: alt
    facets: {{answer: nope}}
"""


def load_text(tmp_path: Path, text: str, name: str = "sweep.yaml") -> object:
    return load_sweep(write_config(tmp_path, text, name))


def test_defaults(tmp_path: Path) -> None:
    sweep = load_sweep(write_config(tmp_path, GOOD))
    assert sweep.config.samples == 3
    assert sweep.baseline == "base"
    assert [s.id for s in sweep.scenarios] == ["default"]
    assert sweep.scenarios[0].inputs == {} and sweep.scenarios[0].reference is None
    assert sweep.comparator.describe() == "similarity < 0.8"
    assert sweep.similarity.name == "text"
    assert sweep.config.executor.kind == "ray" and sweep.config.executor.address is None
    assert sweep.config.output_dir == "runs"


def test_toml_equals_yaml(tmp_path: Path) -> None:
    toml = f"""
name = "good"
runner = "{RUNNER}"
[[arms]]
id = "base"
[[arms]]
id = "alt"
facets = {{ answer = "nope" }}
"""
    a = load_sweep(write_config(tmp_path, GOOD))
    b = load_sweep(write_config(tmp_path, toml, "sweep.toml"))
    assert a.arms == b.arms and a.config.samples == b.config.samples


def test_top_level_reference_is_single_scenario_shorthand(tmp_path: Path) -> None:
    sweep = load_sweep(write_config(tmp_path, GOOD + "reference: 'yes'\n"))
    assert sweep.scenarios[0].reference == "yes"


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        ("samples: 1\n", r"samples: samples must be at least 2 \(rule 1"),
        ("samples: '3'\n", r"samples: Input should be a valid integer \(received '3'\)"),
        (
            "sample: 3\n",
            r"sample: unknown key; did you mean 'samples'\? allowed keys here: ablate_each, arms, baseline",
        ),
        (
            "comparator: {kind: fuzzy}\n",
            r"comparator\.kind: unknown comparator kind 'fuzzy'; known: contains, custom, exact, judge, normalized, numeric, one-of, regex, similarity",
        ),
        (
            "comparator: {kind: exact, threshold: 0.5}\n",
            "'threshold' applies only to kind 'similarity'",
        ),
        ("comparator: {threshold: 1.5}\n", r"'threshold' must lie in \[0, 1\]"),
        ("comparator: {kind: custom}\n", "kind 'custom' needs 'target"),
        ("comparator: {kind: numeric, tolerance: -1}\n", "'tolerance' must be >= 0"),
        (
            "similarity: {kind: semantic}\n",
            r"similarity\.kind: unknown similarity kind 'semantic'; known: custom, embedding, text",
        ),
        ("executor: {kind: local, address: auto}\n", "'address' applies only to kind 'ray'"),
        (
            "executor: {kind: local, join_timeout_s: 5}\n",
            "'join_timeout_s' applies only to kind 'ray'",
        ),
        ("executor: {join_timeout_s: 0}\n", r"executor\.join_timeout_s: .*greater than 0"),
        (
            "executor: {join_timeout_s: .inf}\n",
            r"executor\.join_timeout_s: .*less than or equal to 3600",
        ),
        (
            "executor: {max_in_flight: 0}\n",
            r"executor\.max_in_flight: Input should be greater than or equal to 1",
        ),
        (
            "scenarios: [{id: a, input: {}}]\n",
            r"scenarios\[0\]\.input: unknown key; did you mean 'inputs'",
        ),
        ("scenarios: [{id: a}]\nreference: x\n", "give each scenario its own 'reference'"),
        ("scenarios: []\n", "scenarios: scenarios is empty"),
        (  # a file named bare listed the union's two misses; now the fix in one line
            "scenarios: qs.jsonl\n",
            r"scenarios: scenarios is the text 'qs.jsonl': write a list of scenarios, or "
            r"\{file: qs.jsonl\} to read them",
        ),
        ("scenarios: [{id: a}, {id: a}]\n", r"scenarios\[1\]\.id: scenario id 'a' is already used"),
        ("baseline: nope\n", "baseline: baseline 'nope' is not an arm id"),
        ("statistics: {alpha: 1.5}\n", r"statistics\.alpha: Input should be less than 1"),
        ("statistics: {alpha: 0}\n", r"statistics\.alpha: Input should be greater than 0"),
        ("statistics: {adjust: bonferroni}\n", r"statistics\.adjust: Input should be 'holm'"),
        ("statistics: {family: arm}\n", r"statistics\.family: Input should be 'sweep'"),
        ("statistics: {pairing: arms}\n", r"statistics\.pairing: Input should be 'seed'"),
        ("statistics: {level: 0.9}\n", r"statistics\.level: unknown key"),
    ],
)
def test_bad_values_name_the_field(tmp_path: Path, extra: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        load_sweep(write_config(tmp_path, GOOD + extra))


def test_name_pattern(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"name: String should match pattern"):
        load_sweep(write_config(tmp_path, GOOD.replace("name: good", "name: 'my sweep'")))


def test_missing_required_keys(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError,
        match=r"name: required key is missing; add it; and 1 more: runner: required key is missing",
    ):
        load_sweep(write_config(tmp_path, "samples: 3\n"))


def test_unknown_arm_key(tmp_path: Path) -> None:
    text = GOOD.replace("facets: {answer: nope}", "facet: {answer: nope}")
    with pytest.raises(ConfigError, match=r"arms\[1\]\.facet: unknown key; did you mean 'facets'"):
        load_sweep(write_config(tmp_path, text))


def test_wrong_type_in_arm(tmp_path: Path) -> None:
    text = GOOD.replace("facets: {answer: nope}", "facets: [answer]")
    with pytest.raises(ConfigError, match=r"arms\[1\]\.facets: Input should be a valid dictionary"):
        load_sweep(write_config(tmp_path, text))


def test_refusal_duplicate_configuration(tmp_path: Path) -> None:
    text = GOOD + "  - id: alt2\n    facets: {answer: nope}\n"
    with pytest.raises(RefusalError, match=r"arms\[2\]: arm 'alt2' has the same configuration"):
        load_sweep(write_config(tmp_path, text))


def test_yaml_syntax_error_has_position(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"YAML syntax error at line 3, column 1"):
        load_sweep(write_config(tmp_path, "name: x\narms: [a\n"))


def test_toml_syntax_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="TOML syntax error"):
        load_sweep(write_config(tmp_path, "name = \n", "sweep.toml"))


def test_top_level_not_a_mapping(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="top level must be a mapping of keys, got list"):
        load_sweep(write_config(tmp_path, "- a\n- b\n"))


def test_unknown_extension(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"must end in \.yaml, \.yml or \.toml"):
        load_sweep(write_config(tmp_path, GOOD, "sweep.json"))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_sweep(tmp_path / "nope.yaml")


@pytest.mark.parametrize(
    ("runner", "match"),
    [
        ("no_colon", "is not a target; write 'package.module:callable'"),
        ("missing_file.py:run", "runner: runner file .*missing_file.py' does not exist"),
        ("not_a_module_xyz:run", "cannot import module 'not_a_module_xyz'"),
        (f"{TESTS / 'runners.py'}:nope", "has no attribute 'nope'; it defines: "),
        (f"{TESTS / 'runners.py'}:NOT_CALLABLE", "is a int, not a callable"),
    ],
)
def test_runner_problems(tmp_path: Path, runner: str, match: str) -> None:
    with pytest.raises(RunnerImportError, match=match):
        load_sweep(write_config(tmp_path, GOOD.replace(RUNNER, runner)))


def test_relative_runner_path_is_relative_to_config(tmp_path: Path) -> None:
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "a.py").write_text("def run(ctx):\n    return 'x'\n")
    sweep = load_sweep(write_config(tmp_path, GOOD.replace(RUNNER, "agents/a.py:run")))
    assert str(sweep.runner) == f"{tmp_path / 'agents' / 'a.py'}:run"


def test_set_overrides_and_flags(tmp_path: Path) -> None:
    path = write_config(tmp_path, GOOD)
    sweep = load_sweep(
        path,
        overrides=["samples=5", "arms.1.facets.answer=maybe", "comparator.threshold=0.5"],
        executor="local",
    )
    assert sweep.config.samples == 5
    assert sweep.arms[1].facets == {"answer": "maybe"}
    assert sweep.comparator.describe() == "similarity < 0.5"
    assert sweep.config.executor.kind == "local"
    assert "--executor local" in sweep.overrides


def test_set_null_drops_the_key_so_its_default_applies(tmp_path: Path) -> None:
    extra = "  - id: other\n    facets: {answer: maybe}\n"
    text = (
        GOOD + extra + "samples: 7\nbudget: {usd: 5}\nreference: Paris\ncomparator: {kind: exact}\n"
    )
    path = write_config(tmp_path, text)
    sweep = load_sweep(path, overrides=["samples=null", "budget=~", "reference=null"])
    assert sweep.config.samples == 3  # the default, as if the file never wrote it
    assert sweep.config.budget == {} and sweep.scenarios[0].reference is None
    assert sweep.overrides == ("samples=null", "budget=~", "reference=null")
    # inside a mapping, on a list element, and below a key the file does not have
    sweep = load_sweep(path, overrides=["comparator.kind=null", "arms.1=null", "sequential.x=null"])
    assert sweep.comparator.describe() == "similarity < 0.8"  # the default comparator
    assert [a.id for a in sweep.arms] == ["base", "other"] and sweep.config.sequential is None
    # quoted, null is text; a key the schema requires is named as missing once dropped
    assert load_sweep(path, overrides=["name='null'"]).config.name == "null"
    with pytest.raises(ConfigError, match=r"^name: "):
        load_sweep(path, overrides=["name=null"])


@pytest.mark.parametrize(
    ("override", "match"),
    [
        ("samples", r"--set: --set expects dotted.key=value"),
        ("arms.9.id=x", "is not an index of a list of 2"),
        ("name.x=1", "'name' is a value, not a mapping"),
        ("a..b=1", "empty segment"),
    ],
)
def test_bad_overrides(tmp_path: Path, override: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        load_sweep(write_config(tmp_path, GOOD), overrides=[override])


def test_custom_comparator_target_is_loaded_before_running(tmp_path: Path) -> None:
    text = GOOD + f"comparator: {{kind: custom, target: '{TESTS / 'runners.py'}:missing'}}\n"
    with pytest.raises(
        RunnerImportError, match=r"comparator\.target: .* has no attribute 'missing'"
    ):
        load_sweep(write_config(tmp_path, text))


def test_plain_string_shorthands(tmp_path: Path) -> None:
    # The YAML accepts what the Python API accepts: a kind name, or a module:attr target.
    (tmp_path / "checks.py").write_text(
        "def same(reference, output):\n    return reference != output\n", encoding="utf-8"
    )
    text = GOOD + "comparator: exact\nsimilarity: text\nexecutor: local\n"
    sweep = load_sweep(write_config(tmp_path, text))
    assert sweep.comparator.kind == "exact" and sweep.config.executor.kind == "local"
    custom = load_sweep(write_config(tmp_path, GOOD + "comparator: checks.py:same\n", "c.yaml"))
    assert custom.comparator.kind == "custom"
    assert custom.comparator.flipped("a", "b", 1.0)
