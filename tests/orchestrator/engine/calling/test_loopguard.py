"""A runner can end its own run, never the engine (issue 27 item 1): any ``BaseException`` a
runner raises, and any misuse of the event loop it runs on, is that run's recorded error; the
rest of the sweep finishes, ``timeout_s`` still fires, and nothing hangs.

Every sweep runs in a CLI subprocess under a hard timeout, so a hang fails the test instead of
hanging the suite, and stderr can be checked for tracebacks.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ....conftest import TESTS, write_config

HOSTILE = TESTS / "hostile_runners.py"
HARD_S = 60
"""Seconds a sweep of six short runs may take before the test calls it a hang."""


def sweep(
    tmp_path: Path,
    runner: str,
    what: str,
    executor: str = "{kind: local}",
    samples: int = 3,
    every: bool = False,
    hang_seed: int = -1,
    runners: Path = HOSTILE,
) -> tuple[int, str, list[dict[str, Any]]]:
    """Run a sweep of ``runners``' ``runner`` in a subprocess: (exit code, stderr, the records)."""
    inputs = f"{{what: {what}, every: {str(every).lower()}, hang_seed: {hang_seed}}}"
    cfg = write_config(
        tmp_path,
        f"name: h\nrunner: {runners}:{runner}\nsamples: {samples}\n"
        f"scenarios: [{{id: s, inputs: {inputs}, "
        "reference: 'yes'}]\n"
        f"comparator: {{kind: exact}}\nexecutor: {executor}\n"
        "arms: [{id: base}, {id: alt, facets: {x: 1}}]\n",
    )
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "counterfact.orchestrator.cli", "run", str(cfg), "--out", str(out)]
    done = subprocess.run([*cmd, "--no-report"], capture_output=True, timeout=HARD_S, check=False)
    runs_file = out / "runs.jsonl"
    text = runs_file.read_text(encoding="utf-8") if runs_file.exists() else ""
    records = [json.loads(line) for line in text.splitlines() if line.strip()]
    return done.returncode, done.stderr.decode(errors="replace"), records


def failures(records: list[dict[str, Any]]) -> list[tuple[str, int, str, str]]:
    return [
        (r["arm"], r["seed"], r["error"]["type"], r["error"]["message"])
        for r in records
        if r["error"] is not None
    ]


RAISED = {
    "interrupt": ("KeyboardInterrupt", "the runner's own interrupt"),
    "exit": ("SystemExit", "the runner's own exit"),
    "generator-exit": ("GeneratorExit", "the runner's own generator exit"),
    "base": ("Unwind", "the runner's own unwind"),
}


@pytest.mark.parametrize(
    ("runner", "executor"),
    [
        ("async_hostile", "{kind: local}"),
        ("sync_hostile", "{kind: local, concurrency: 4}"),
        ("sync_hostile", "{kind: local}"),
    ],
    ids=["async", "sync-concurrent", "sync-in-order"],
)
@pytest.mark.parametrize("what", sorted(RAISED))
def test_a_base_exception_from_a_runner_is_that_runs_recorded_error(
    tmp_path: Path, runner: str, executor: str, what: str
) -> None:
    code, err, records = sweep(tmp_path, runner, what, executor)
    assert code == 0, err[-3000:]
    assert "Traceback" not in err
    assert len(records) == 6
    kind, message = RAISED[what]
    assert failures(records) == [("alt", 0, kind, message)]


@pytest.mark.parametrize("what", ["stop-loop", "stop-later", "raise-in-callback", "close-loop"])
def test_a_runner_that_misuses_its_event_loop_fails_alone(tmp_path: Path, what: str) -> None:
    code, err, records = sweep(tmp_path, "async_hostile", what)
    assert code == 0, err[-3000:]
    assert "Traceback" not in err
    assert len(records) == 6
    failed = failures(records)
    assert [(arm, seed) for arm, seed, *_ in failed] == [("alt", 0)]
    assert "event loop" in failed[0][3]


def test_a_runner_cancelling_the_engines_tasks_leaves_every_run_recorded(tmp_path: Path) -> None:
    # seed 0 of 'alt' cancels every other task on the loop, the engine's own among them: the
    # runs it cancels are recorded as RunCancelled (before, none was recorded and the sweep
    # said "the sweep stopped before they ran" and exited 0, so a resume did the same again)
    code, err, records = sweep(tmp_path, "async_hostile", "cancel-others")
    assert code in (0, 1), err[-3000:]
    assert "Traceback" not in err
    assert len(records) == 6
    failed = {(arm, seed): (kind, message) for arm, seed, kind, message in failures(records)}
    assert ("alt", 0) in failed
    assert {kind for kind, _ in failed.values()} == {"RunCancelled"}
    assert all("cancels tasks it did not start" in message for _, message in failed.values())


def test_timeout_s_still_fires_after_runners_stopped_the_loop(tmp_path: Path) -> None:
    # every 'alt' run stops the loop and seed 1 of 'base' sleeps for 600 s: the loop survives
    # the stops, so the timeout that alone can end the sleeping run still fires
    code, err, records = sweep(
        tmp_path,
        "async_hostile",
        "stop-loop",
        "{kind: local, concurrency: 6, timeout_s: 5}",
        every=True,
        hang_seed=1,
    )
    assert code == 0, err[-3000:]
    assert len(records) == 6
    failed = {(arm, seed): kind for arm, seed, kind, _ in failures(records)}
    assert failed == {
        ("alt", 0): "EventLoopMisuse",
        ("alt", 1): "EventLoopMisuse",
        ("alt", 2): "EventLoopMisuse",
        ("base", 1): "RunTimeout",
    }


def test_a_runner_scope_closed_from_another_context_ends_quietly() -> None:
    # the runner's scope wraps the same coroutine as its ablation claim
    # (tests/probes/test_ablation.py): a run given up with its loop is closed when collected, in
    # another context, and resetting the scope there raised ValueError
    import contextvars

    from counterfact.orchestrator.engine.calling.loopguard import _SCOPE, runner_scope

    held = runner_scope()
    contextvars.copy_context().run(held.__enter__)
    assert held.__exit__(None, None, None) is False
    assert _SCOPE.get() is None
