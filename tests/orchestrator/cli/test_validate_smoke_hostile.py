"""``validate --smoke`` and a runner that raises what is not an ``Exception`` (issue 27): its
``KeyboardInterrupt``, ``SystemExit`` or other ``BaseException`` is the smoke run's failure, one
line naming it, exit 1 as for any failed smoke run — never taken for the user's Ctrl-C (which
would end validate with "Aborted!"), never a traceback.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ...conftest import TESTS

HOSTILE = TESTS / "hostile_runners.py"
RAISED = {
    "interrupt": "KeyboardInterrupt: the runner's own interrupt",
    "exit": "SystemExit: the runner's own exit",
    "base": "Unwind: the runner's own unwind",
}


def smoke(tmp_path: Path, runner: str, what: str, *extra: str) -> subprocess.CompletedProcess[str]:
    cfg = tmp_path / "sweep.yaml"
    cfg.write_text(
        f"name: ki\nrunner: {HOSTILE}:{runner}\n"
        f"scenarios: [{{id: s, inputs: {{what: {what}}}}}]\n"
        "arms: [{id: base}, {id: alt, facets: {x: 1}}]\n"
    )
    cmd = [sys.executable, "-m", "counterfact.orchestrator.cli", "validate", str(cfg), "--smoke"]
    out = ["--out", str(tmp_path / "o")]
    return subprocess.run([*cmd, *out, *extra], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("runner", ["sync_hostile", "async_hostile"])
@pytest.mark.parametrize("what", sorted(RAISED))
def test_a_runners_base_exception_is_the_smoke_runs_failure(
    tmp_path: Path, runner: str, what: str
) -> None:
    done = smoke(tmp_path, runner, what)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "Aborted" not in done.stderr, done.stderr
    assert "smoke: arm 'base': ok" in done.stdout
    assert f"smoke: arm 'alt': {RAISED[what]}" in done.stdout
    (line,) = done.stderr.strip().splitlines()
    assert line == "error: --smoke: 1 arm(s) failed their run; see above"


def test_a_bisection_smoke_run_that_raises_keyboard_interrupt_fails_alone(tmp_path: Path) -> None:
    cfg = tmp_path / "b.yaml"
    cfg.write_text(
        f"name: ki\nrunner: {HOSTILE}:sync_hostile\n"
        "scenarios: [{id: s, inputs: {what: interrupt, every: true}}]\n"
        "arms: [{id: alt}]\nbisect: {suspects: [fact:a]}\n"
    )
    cmd = [sys.executable, "-m", "counterfact.orchestrator.cli", "validate", str(cfg)]
    done = subprocess.run(
        [*cmd, "--bisect", "--smoke", "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "smoke: arm 'alt': KeyboardInterrupt: the runner's own interrupt" in done.stdout
    assert done.stderr.strip().splitlines() == [
        "error: --smoke: 1 arm(s) failed their run; see above"
    ]
