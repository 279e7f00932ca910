"""``counterfact --version`` and ``counterfact validate`` start fast: they never import Ray or
scipy (the heavy imports, about 0.6 s of a 0.8 s start before this was pinned). The time itself is
measured by ``scripts/bench_cli_start.py``, not here (shared machines are noisy)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PROBE = """
import json, sys
from counterfact.orchestrator.cli import main
try:
    main(sys.argv[1:], standalone_mode=False)
finally:
    heavy = sorted({m.split(".")[0] for m in sys.modules} & {"ray", "scipy", "matplotlib", "pandas"})
    print(json.dumps(heavy), file=sys.stderr)
"""


@pytest.mark.parametrize(
    "args",
    [["--version"], ["validate", str(ROOT / "configs" / "quickstart.yaml"), "--out", "{tmp}"]],
)
def test_command_imports_neither_ray_nor_scipy(args: list[str], tmp_path: Path) -> None:
    argv = [a.replace("{tmp}", str(tmp_path / "o")) for a in args]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []
    assert ("version" in done.stdout) if args == ["--version"] else done.stdout.startswith("ok:")


def test_the_probe_would_see_scipy() -> None:
    # The check above is only worth something if a judging import shows up in the list.
    probe = PROBE.replace(
        "from counterfact.orchestrator.cli import main",
        "import counterfact.verdicts.stats.intervals\nfrom counterfact.orchestrator.cli import main",
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "--version"], capture_output=True, text=True, timeout=60
    )
    assert json.loads(done.stderr.strip().splitlines()[-1]) == ["scipy"]
