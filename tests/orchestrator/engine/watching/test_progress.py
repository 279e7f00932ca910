"""Structured log events of a sweep, asserted with structlog's capture_logs."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from counterfact import DegenerateBandWarning, compare_arms
from counterfact.orchestrator.engine.watching.progress import LogProgress

from ....conftest import scripted


def test_failed_run_and_progress_events() -> None:
    runner = scripted({"base": "yes", "alt": ["no", RuntimeError("boom"), "no"]})
    with capture_logs() as logs:
        result = compare_arms(
            [{"id": "base"}, {"id": "alt", "facets": {"m": 1}}],
            runner,
            reference="yes",
            comparator="exact",
            executor="local",
            progress=LogProgress(every_s=0.0),
        )
    events = [e["event"] for e in logs]
    assert events[0] == "sweep.start" and events[-1] == "sweep.done"
    (failed,) = [e for e in logs if e["event"] == "run.failed"]
    assert (failed["arm"], failed["seed"], failed["error"]) == ("alt", 1, "RuntimeError: boom")
    progress = [e for e in logs if e["event"] == "sweep.progress"]
    assert [p["done"] for p in progress] == [1, 2, 3, 4, 5, 6]
    assert progress[-1]["failed"] == 1 and progress[-1]["total"] == 6
    assert result.row("alt").reason == "runs-failed"


def test_degenerate_band_is_warned_not_raised() -> None:
    # A baseline that never varies: its band has no width. The sweep finishes (a result), and
    # the weakness is both a Python warning (category DegenerateBandWarning) and a log event.
    with (
        capture_logs() as logs,
        pytest.warns(DegenerateBandWarning, match="scenario 'default'.*never varied") as caught,
    ):
        result = compare_arms(
            [{"id": "base"}, {"id": "alt", "facets": {"m": 1}}],
            scripted({"base": "yes", "alt": "yes"}),
            reference="yes",
            executor="local",
        )
    (warning,) = [e for e in logs if e["event"] == "band.degenerate"]
    assert warning["log_level"] == "warning" and warning["floor"] == 1.0
    assert len(caught) == 1 and caught[0].filename == __file__  # points at the caller's line
    assert result.row("alt").verdict == "not-confirmed"


def test_a_varying_baseline_warns_nothing(recwarn: pytest.WarningsRecorder) -> None:
    compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"m": 1}}],
        scripted({"base": ["yes!", "yes", "yes."], "alt": "yes"}),
        reference="yes",
        executor="local",
    )
    assert [w.category for w in recwarn] == []
