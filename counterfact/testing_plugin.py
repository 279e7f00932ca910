"""The ``counterfact`` pytest plugin: the ``counterfact_sweep`` fixture and one option.

Registered through the ``pytest11`` entry point, so installing counterfact next to pytest is
enough; ``-p no:counterfact`` turns it off. Without the entry point (a checkout that was not
installed), load it with ``-p counterfact.testing_plugin`` or ``pytest_plugins =
["counterfact.testing_plugin"]`` in a ``conftest.py``. This module needs pytest; nothing else in
counterfact does (:mod:`counterfact.testing` holds the helpers).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from counterfact.testing import SweepGate

EXECUTOR_CHOICES = ("local", "ray")
"""``--counterfact-executor``'s choices (the executor kinds)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--counterfact-executor``: the executor every ``counterfact_sweep`` call uses."""
    group = parser.getgroup("counterfact", "counterfact sweeps as test gates")
    group.addoption(
        "--counterfact-executor",
        dest="counterfact_executor",
        choices=EXECUTOR_CHOICES,
        default=None,
        help="Run every counterfact_sweep on this executor unless the call names one "
        "(default: each sweep file's own executor).",
    )


@pytest.fixture
def counterfact_sweep(request: pytest.FixtureRequest, tmp_path: Path) -> SweepGate:
    """Call it with a sweep file: the sweep runs into ``tmp_path`` and the test fails (an
    ``AssertionError`` naming the arms and their states) when a challenger ends in a ``fail_on``
    state (default ``confirmed``), as ``counterfact run --fail-on`` exits 3.
    """
    executor = request.config.getoption("counterfact_executor")
    return SweepGate(tmp_path, executor=executor)
