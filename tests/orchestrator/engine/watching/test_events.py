"""As a library counterfact prints nothing; the host's ``logging`` configuration decides.

Each case runs in a fresh interpreter: structlog's configuration is process-global, and the test
session configures it (``capture_logs``), which a user's script would not have done.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = """
import logging, sys
{setup}
from counterfact import compare_arms

def run(ctx):
    out = "yes" if ctx.arm.id == "base" or ctx.seed else "no"
    if ctx.arm.id == "alt" and ctx.seed == 2:
        raise RuntimeError("boom")
    return {{"output": out, "cost": {{"loops": 1}}}}

result = compare_arms(
    [{{"id": "base"}}, {{"id": "alt", "facets": {{"m": 1}}}}],
    run, samples=3, reference="yes", comparator="exact", executor="local",
)
assert result.row("alt").reason == "runs-failed"
"""


def run_script(tmp_path: Path, setup: str = "") -> subprocess.CompletedProcess[str]:
    path = tmp_path / "host.py"
    path.write_text(SCRIPT.format(setup=setup), encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )


def test_the_python_api_writes_nothing_by_default(tmp_path: Path) -> None:
    # A failed run emits a warning-level event; even that stays silent until the host asks.
    done = run_script(tmp_path)
    assert done.returncode == 0, done.stderr
    assert (done.stdout, done.stderr) == ("", "")


def test_the_hosts_logging_configuration_receives_the_events(tmp_path: Path) -> None:
    setup = "logging.basicConfig(stream=sys.stdout, level=logging.DEBUG, format='%(message)s')"
    done = run_script(tmp_path, setup)
    assert done.returncode == 0, done.stderr
    events = done.stdout.splitlines()
    names = [e.split()[0] for e in events]
    assert "event='sweep.start'" in names and "event='sweep.done'" in names
    assert names.count("event='run.done'") == 6
    (failed,) = [e for e in events if e.startswith("event='run.failed'")]
    assert "arm='alt'" in failed and "seed=2" in failed and "RuntimeError: boom" in failed
