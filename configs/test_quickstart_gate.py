"""A test suite's gate on the quickstart sweep (docs/how-to/pytest.md), run as it is written by
tests/test_testing_plugin.py:

    pytest configs/test_quickstart_gate.py

The ``counterfact_sweep`` fixture comes from counterfact's pytest plugin, loaded by itself once
counterfact is installed next to pytest.
"""

from pathlib import Path

import pytest

from counterfact.testing import assert_no_regression, run_sweep_file

QUICKSTART = Path(__file__).with_name("quickstart.yaml")


def test_the_stale_index_is_caught(counterfact_sweep):
    # stale-index changes the answer on every seed: the gate fails, naming the arm
    with pytest.raises(AssertionError, match="stale-index: confirmed"):
        counterfact_sweep(QUICKSTART, executor="local")


def test_the_other_changes_pass(counterfact_sweep):
    # arms.1 (stale-index) dropped; large-model only rewords, rerank did not take effect
    result = counterfact_sweep(QUICKSTART, executor="local", overrides={"arms.1": None})
    assert result.row("rerank").verdict == "inconclusive"  # not a gate state unless asked


def test_a_run_directory_can_be_gated_later(tmp_path):
    out = tmp_path / "quickstart"
    run_sweep_file(QUICKSTART, executor="local", out=out, overrides={"arms.1": None})
    with pytest.raises(AssertionError, match="rerank: inconclusive"):
        assert_no_regression(out, fail_on=("confirmed", "inconclusive"))
