"""``validate --smoke`` has a deadline (issue 27 item 8): a runner that never returns is
reported in one line and the command exits 1, never a hang. Run in a child with a hard timeout,
so a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HARD_TIMEOUT_S = 60
TESTS = Path(__file__).resolve().parents[2]


def test_a_smoke_run_past_its_timeout_is_one_line_and_exit_1(tmp_path: Path) -> None:
    cfg = tmp_path / "sweep.yaml"
    cfg.write_text(
        f"name: hang\nrunner: {TESTS / 'runners.py'}:sleeps\n"
        "scenarios: [{id: s, inputs: {sleep_s: 1000000}}]\n"
        "arms: [{id: base}, {id: alt, facets: {x: 1}}]\n"
    )
    start = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from counterfact.orchestrator.cli import entry; entry()",
            "validate",
            str(cfg),
            "--smoke",
            "--timeout",
            "0.5",
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        timeout=HARD_TIMEOUT_S,
    )
    assert time.monotonic() - start < 30
    assert done.returncode == 1, done.stderr
    assert "smoke: arm 'base': TimeoutError: " in done.stdout
    assert "alt" not in done.stdout.split("smoke:")[-1]  # stopped at the first that hung
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: --smoke: arm 'base' did not finish within --timeout 0.5 s")


def test_the_timeout_must_be_positive(tmp_path: Path) -> None:
    from ...helpers import invoke

    cfg = tmp_path / "sweep.yaml"
    cfg.write_text(
        f"name: t\nrunner: {TESTS / 'runners.py'}:echo_arm\narms: [{{id: b}}, {{id: a, facets: {{x: 1}}}}]\n"
    )
    code, _, err = invoke("validate", str(cfg), "--smoke", "--timeout", "0")
    assert code == 2 and "--timeout" in err
