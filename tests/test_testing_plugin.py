"""The ``counterfact`` pytest plugin, run the way a team's suite runs it: a small test suite
using the ``counterfact_sweep`` fixture, run by pytest's own ``pytester`` against a small sweep
on the in-process executor.

Each suite runs in a fresh interpreter (``runpytest_subprocess``): an in-process run drops the
modules it imported afterwards, and numpy cannot be imported a second time into one process.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .gate_sweeps import write_gate_sweep

if sys.version_info >= (3, 11):
    import tomllib
else:  # the package's own fallback (pyproject.toml's tomli dependency)
    import tomli as tomllib

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ("-p", "no:counterfact", "-p", "counterfact.testing_plugin")
"""Load the plugin by module (this checkout is not installed with its entry point); block the
entry point's name, so an installed copy is not registered twice."""


@pytest.fixture(autouse=True)
def _this_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suites import counterfact from this checkout (the one under test)."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))


SUITE = """
def test_gate(counterfact_sweep):
    result = counterfact_sweep("gate.yaml")
    assert result.summary.execution.status == "complete"
"""


def test_the_fixture_fails_the_test_on_a_changed_arm(pytester: pytest.Pytester) -> None:
    write_gate_sweep(pytester.path)
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest_subprocess(*PLUGIN)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E       AssertionError: sweep 'gate': 1 match(es) of fail_on (confirmed):",
            "E         broken: confirmed",
            "E         | broken: confirmed (underpowered) — breaks 1 question(s), fixes 0 *",
            "E       records: */gate-1",
            "E       report: */gate-1/report.html",
        ]
    )
    text = result.stdout.str()
    assert 'result = counterfact_sweep("gate.yaml")' in text  # the test's own line is shown
    assert "def __call__" not in text  # the fixture's frames are hidden


def test_the_fixture_passes_when_no_arm_changed(pytester: pytest.Pytester) -> None:
    write_gate_sweep(pytester.path, arms=("small", "large"))
    pytester.makepyfile(test_suite=SUITE)
    pytester.runpytest_subprocess(*PLUGIN).assert_outcomes(passed=1)


def test_fail_on_chooses_the_states(pytester: pytest.Pytester) -> None:
    # 4 seeds cannot make a test significant: a gate on `significant` passes the changed arm
    # (and warns that it could not fire), one on `underpowered` fails the unchanged one too.
    write_gate_sweep(pytester.path)
    pytester.makepyfile(
        test_suite="""
def test_significant(counterfact_sweep):
    counterfact_sweep("gate.yaml", fail_on="significant")

def test_underpowered(counterfact_sweep):
    counterfact_sweep("gate.yaml", fail_on=("underpowered",), report=False)
"""
    )
    result = pytester.runpytest_subprocess(*PLUGIN, "-W", "always")
    result.assert_outcomes(passed=1, failed=1, warnings=1)
    result.stdout.fnmatch_lines(
        [
            "E         large: underpowered",
            "E         broken: underpowered",
            "*test_suite.py:2: CounterfactWarning: fail-on significant: this gate could not fire*",
        ]
    )
    assert "report: " not in result.stdout.str()  # report=False


def test_the_executor_option_reaches_every_call(pytester: pytest.Pytester) -> None:
    cfg = write_gate_sweep(pytester.path, arms=("small", "large"))
    cfg.write_text(cfg.read_text().replace("{kind: local}", "{kind: ray}"))
    pytester.makepyfile(
        test_suite="""
def test_local(counterfact_sweep):
    assert counterfact_sweep.executor == "local"  # before anything could start Ray
    result = counterfact_sweep("gate.yaml")
    assert result.summary.config["executor"]["kind"] == "local"
"""
    )
    result = pytester.runpytest_subprocess(*PLUGIN, "--counterfact-executor", "local")
    result.assert_outcomes(passed=1)
    help_text = pytester.runpytest_subprocess(*PLUGIN, "--help").stdout.str()
    assert "--counterfact-executor={local,ray}" in help_text


def test_the_entry_point_loads_the_plugin(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pyproject.toml's pytest11 entry point, installed as a distribution's metadata, is what
    # pytest loads by itself (no -p): a subprocess, as a fresh interpreter finds entry points.
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert declared["pytest11"] == {"counterfact": "counterfact.testing_plugin"}
    site = pytester.path / "site"
    info = site / "counterfact_entrypoint_probe-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: counterfact-entrypoint-probe\n")
    lines = [f"{name} = {target}" for name, target in declared["pytest11"].items()]
    (info / "entry_points.txt").write_text("[pytest11]\n" + "\n".join(lines) + "\n")
    write_gate_sweep(pytester.path)
    pytester.makepyfile(test_suite=SUITE)
    monkeypatch.setenv("PYTHONPATH", f"{site}:{ROOT}")
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["E         broken: confirmed"])
    blocked = pytester.runpytest_subprocess("-p", "no:counterfact")
    blocked.stdout.fnmatch_lines(["E       fixture 'counterfact_sweep' not found"])


def test_the_plugin_offers_every_executor_kind() -> None:
    from counterfact.orchestrator.engine.executors.registry import EXECUTORS
    from counterfact.testing_plugin import EXECUTOR_CHOICES

    assert tuple(sorted(EXECUTORS)) == EXECUTOR_CHOICES


def test_the_documented_example_suite_passes(pytester: pytest.Pytester) -> None:
    # configs/test_quickstart_gate.py, the how-to's example, beside the quickstart it gates.
    for name in ("quickstart.yaml", "quickstart_agent.py", "test_quickstart_gate.py"):
        (pytester.path / name).write_text((ROOT / "configs" / name).read_text())
    result = pytester.runpytest_subprocess(*PLUGIN, "-v")
    result.assert_outcomes(passed=3)
