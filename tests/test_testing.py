"""counterfact.testing: a sweep (or its run directory) gated the way ``--fail-on`` gates it."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from counterfact import BudgetExhausted, ConfigError, CounterfactWarning, RunContext, find_culprits
from counterfact.testing import (
    SweepGate,
    assert_no_regression,
    override_strings,
    read_gate,
    run_sweep_file,
)

from .gate_sweeps import write_gate_sweep
from .helpers import invoke

ROOT = Path(__file__).resolve().parent.parent


def test_a_changed_arm_fails_naming_the_arm_its_state_and_its_summary(tmp_path: Path) -> None:
    result = run_sweep_file(write_gate_sweep(tmp_path), out=tmp_path / "o")
    with pytest.raises(AssertionError) as caught:
        assert_no_regression(result)  # default: confirmed
    lines = str(caught.value).splitlines()
    assert lines[0] == "sweep 'gate': 1 match(es) of fail_on (confirmed):"
    assert lines[1] == "  broken: confirmed"
    assert lines[2].startswith(
        "  | broken: confirmed (underpowered) — breaks 1 question(s), fixes 0"
    )
    assert lines[-1] == f"records: {tmp_path / 'o'}"
    assert "large" not in str(caught.value)  # the arm that changed nothing is not named


def test_a_sweep_whose_arms_change_nothing_passes(tmp_path: Path) -> None:
    result = run_sweep_file(write_gate_sweep(tmp_path, arms=("small", "large")))
    reading = assert_no_regression(result, fail_on=("confirmed", "inconclusive"))
    assert reading.passed and reading.hits == () and reading.run_dir is None  # kept in memory


def test_a_run_directory_is_gated_as_the_cli_gates_it(tmp_path: Path) -> None:
    # The same sweep through `counterfact run --fail-on`: exit 3 on the states the helper
    # names, and the helper reads the directory the command wrote to the same hits.
    out = tmp_path / "o"
    cfg = write_gate_sweep(tmp_path)
    states = ("confirmed", "underpowered")
    args = [a for s in states for a in ("--fail-on", s)]
    code, _, err = invoke("run", str(cfg), "--out", str(out), "--no-report", *args)
    assert code == 3, err
    assert (
        "fail-on: 3 match(es): large: underpowered; broken: confirmed; broken: underpowered" in err
    )
    with pytest.raises(AssertionError) as caught:
        assert_no_regression(out, fail_on=states)
    assert caught.value.args[0].splitlines()[1:4] == [
        "  large: underpowered",
        "  broken: confirmed",
        "  broken: underpowered",
    ]
    assert read_gate(str(out), "scenario-confirmed").hits == ("default/broken: scenario-confirmed",)


def test_an_unknown_state_is_refused_with_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown state 'changed'; choose from confirmed, "):
        read_gate(tmp_path, fail_on=("changed",))
    with pytest.raises(ConfigError, match="no state to fail on"):
        read_gate(tmp_path, fail_on=())


@pytest.mark.parametrize("source", [12345, None, object()])
def test_a_source_that_is_no_result_or_path_is_a_type_error_that_says_so(source: object) -> None:
    # issue 45 item 10: assert_no_regression(12345) raised AttributeError ('int' ... 'summary')
    with pytest.raises(TypeError, match=r"reads a SweepResult, a BisectResult or a run direc"):
        assert_no_regression(source)  # type: ignore[arg-type]


def test_a_fail_on_that_is_no_state_or_list_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"fail_on takes a state or a list of states, got int"):
        read_gate(tmp_path, fail_on=5)  # type: ignore[arg-type]


def test_a_significant_gate_that_cannot_fire_warns(tmp_path: Path) -> None:
    result = run_sweep_file(write_gate_sweep(tmp_path, arms=("small", "large")))
    # one challenger, one-sided exact test: 4 seeds can give at best p = 0.5^4 = 0.0625, 5 give
    # 0.5^5 = 0.031 < 0.05
    with pytest.warns(CounterfactWarning, match=r"1 of 1 .*\(at least 5 samples per arm can "):
        assert_no_regression(result, fail_on="significant")


def test_a_sweep_the_budget_stopped_does_not_clear_the_gate(tmp_path: Path) -> None:
    # Every run costs 10 tokens: the budget stops the sweep after 3 of its 12 runs.
    cfg = write_gate_sweep(tmp_path, arms=("small", "large"), extra="budget: {tokens: 30}\n")
    with pytest.raises(BudgetExhausted):
        run_sweep_file(cfg, out=tmp_path / "o")
    with pytest.raises(AssertionError, match=r"did not complete \(status 'budget-exhausted'\)"):
        assert_no_regression(tmp_path / "o")


def test_a_bisection_that_found_a_culprit_fails(tmp_path: Path) -> None:
    def runner(ctx: RunContext) -> str:
        return "right" if "fact:b" in ctx.arm.ablations else "wrong"

    result = find_culprits(["fact:a", "fact:b"], runner, reference="wrong", executor="local")
    with pytest.raises(AssertionError) as caught:
        assert_no_regression(result)
    text = str(caught.value)
    assert text.splitlines()[:2] == [
        "bisection 'find-culprits': 1 match(es) of fail_on (confirmed):",
        "  bisection: confirmed",
    ]
    assert "fact:b" in text  # the claim names the culprit
    assert assert_no_regression(result, fail_on="inconclusive").passed


def test_overrides_are_set_strings_and_none_drops_a_key(tmp_path: Path) -> None:
    assert override_strings({"samples": 6, "arms.1.facets.model": "broken", "budget": None}) == [
        "samples=6",
        'arms.1.facets.model="broken"',
        "budget=null",
    ]
    assert override_strings(["samples=6"]) == ["samples=6"]
    with pytest.raises(ConfigError, match=r"overrides\['out'\]: PosixPath is not a JSON value"):
        override_strings({"out": tmp_path})
    # Every run costs 10 tokens: the file's budget of 30 stops its 8 runs; dropped, all run.
    cfg = write_gate_sweep(tmp_path, arms=("small", "large"), extra="budget: {tokens: 30}\n")
    with pytest.raises(BudgetExhausted):
        run_sweep_file(cfg, out=tmp_path / "o")
    result = run_sweep_file(cfg, overrides={"arms.1.facets.model": "broken", "budget": None})
    assert result.summary.execution.status == "complete" and result.summary.execution.runs_used == 8
    assert result.row("large").verdict == "confirmed"  # arm 1 now runs the broken model
    assert result.summary.overrides == ['arms.1.facets.model="broken"', "budget=null"]


def test_the_gate_fixture_runs_each_call_into_its_own_folder(tmp_path: Path) -> None:
    gate = SweepGate(tmp_path / "t", executor="local")
    cfg = write_gate_sweep(tmp_path, arms=("small", "large"))
    first, second = gate(cfg), gate(cfg)
    assert (
        first.run_dir == tmp_path / "t" / "gate-1" and second.run_dir == tmp_path / "t" / "gate-2"
    )
    assert not (tmp_path / "t" / "gate-1" / "report.html").exists()  # only a failure draws it
    with pytest.raises(AssertionError) as caught:
        gate(write_gate_sweep(tmp_path), fail_on=("confirmed",))
    page = tmp_path / "t" / "gate-3" / "report.html"
    assert str(caught.value).splitlines()[-1] == f"report: {page}" and page.is_file()
    with pytest.raises(ConfigError, match="unknown state"):
        gate(cfg, fail_on="changed")
    assert not (tmp_path / "t" / "gate-4").exists()  # refused before anything ran


def test_the_package_and_the_helpers_work_without_pytest(tmp_path: Path) -> None:
    write_gate_sweep(tmp_path)
    code = (
        "import sys\n"
        "sys.modules['pytest'] = None  # import pytest now raises ImportError\n"
        "import counterfact, counterfact.testing as t\n"
        "r = t.run_sweep_file(sys.argv[1])\n"
        "try:\n"
        "    t.assert_no_regression(r)\n"
        "except AssertionError as exc:\n"
        "    print(str(exc).splitlines()[1])\n"
        "try:\n"
        "    import counterfact.testing_plugin\n"
        "except ImportError:\n"
        "    print('plugin needs pytest')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "gate.yaml")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["  broken: confirmed", "plugin needs pytest"]


def test_the_notes_of_a_sweep_are_warnings(tmp_path: Path) -> None:
    cfg = write_gate_sweep(tmp_path, arms=("small", "large"))
    cfg.write_text(cfg.read_text().replace("{kind: local}", "{kind: ray, num_cpus: 1}"))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = run_sweep_file(cfg, executor="local")
    assert result.summary.config["executor"]["kind"] == "local"
    assert any("ignoring executor.num_cpus" in str(w.message) for w in seen)
    assert result.summary.overrides == ["--executor local"]


def test_an_arm_id_with_a_colon_still_gets_its_summary_line(tmp_path: Path) -> None:
    # the matched arms were read back from the 'arm: state' strings by splitting at the first
    # colon, so the arm 'broken: v2' matched as 'broken' and its summary line was dropped
    write_gate_sweep(tmp_path)
    text = (tmp_path / "gate.yaml").read_text(encoding="utf-8")
    text = text.replace("{id: broken,", "{id: 'broken: v2',")
    (tmp_path / "gate.yaml").write_text(text, encoding="utf-8")
    result = run_sweep_file(tmp_path / "gate.yaml", out=tmp_path / "o")
    with pytest.raises(AssertionError) as caught:
        assert_no_regression(result)
    lines = str(caught.value).splitlines()
    assert lines[1] == "  broken: v2: confirmed"
    assert lines[2].startswith("  | broken: v2: confirmed (underpowered)")
