"""A first Ctrl-C before the sweep's graceful stop is in place (issue 45 item 4): while ``run``
loads its modules or the runner, click printed ``Aborted!`` and exited 1 (or the command said
"second interrupt" after the first). It must exit 130 with the interrupted message.

Each case makes one start-up step slow in the child process only — an import hook of the test's
own wrapper, or a runner file that sleeps while it is imported — so the signal lands there every
time, never by timing luck.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ...conftest import write_config

WRAPPER = """
import importlib.abc, os, pathlib, sys, time
slow = os.environ.get("CF_SLOW_IMPORT")

class Slow(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == slow:
            pathlib.Path(os.environ["CF_MARK"]).write_text(name)
            time.sleep(60)
        return None

sys.meta_path.insert(0, Slow())
sys.argv[0] = "counterfact"
from counterfact.orchestrator.cli import entry
entry()
"""

RUNNER = """
import os, pathlib, time
pathlib.Path(os.environ["CF_MARK"]).write_text("runner")
time.sleep(60)

def run(ctx):
    return "yes"
"""


@pytest.mark.parametrize("step", ["imports", "runner"])
def test_a_first_interrupt_while_starting_exits_130_with_the_interrupted_line(
    tmp_path: Path, step: str
) -> None:
    (tmp_path / "slow_runner.py").write_text(RUNNER, encoding="utf-8")
    runner = "slow_runner.py" if step == "runner" else "ok_runner.py"
    (tmp_path / "ok_runner.py").write_text("def run(ctx):\n    return 'yes'\n", encoding="utf-8")
    cfg = write_config(
        tmp_path,
        f"name: s\nrunner: {runner}:run\nsamples: 2\nreference: 'yes'\n"
        "arms: [{id: a}, {id: b, facets: {x: 1}}]\ncomparator: {kind: exact}\n"
        "executor: {kind: ray}\n",
    )
    mark = tmp_path / "mark"
    env = {**os.environ, "CF_MARK": str(mark)}
    if step == "imports":
        env["CF_SLOW_IMPORT"] = "counterfact.orchestrator.drivers.preflight"
    out = tmp_path / "o"
    child = subprocess.Popen(
        [sys.executable, "-c", WRAPPER, "run", str(cfg), "--out", str(out)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not mark.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert mark.exists(), child.communicate(timeout=10)
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130, stderr
    assert "Aborted!" not in stderr and "second interrupt" not in stderr
    said = "interrupted while the sweep was loading: nothing was run; run the same command again"
    assert said in stderr, stderr
    assert not out.exists()
