"""The console script's exit: a cluster join given up is still retrying inside Ray on its
daemon thread, and Ray's C++ core aborted the process (``std::bad_alloc``, exit -6) when the
interpreter finalized under it, after the error line had been printed. ``entry`` then leaves
without finalizing (``os._exit``) with the command's own code.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = """
import atexit, sys, threading, time
from counterfact.orchestrator.engine.executors.ray_address import JOIN_THREAD
atexit.register(lambda: print("finalized", flush=True))  # runs only if the interpreter finalizes
if sys.argv[1] == "join-left":
    threading.Thread(target=time.sleep, args=(60,), name=JOIN_THREAD, daemon=True).start()
sys.argv = ["counterfact", "validate", "no-such-sweep.yaml"]
from counterfact.orchestrator.cli import entry
entry()
"""


@pytest.mark.parametrize(("left", "finalized"), [("join-left", False), ("nothing-left", True)])
def test_a_join_left_retrying_exits_with_the_code_without_finalizing(
    left: str, finalized: bool
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, left], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr  # the command's own code: a missing sweep file
    assert done.stderr.startswith("error:") or "\nerror:" in done.stderr, done.stderr
    assert ("finalized" in done.stdout) is finalized
