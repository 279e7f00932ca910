"""Run mypy (strict, from pyproject) on the ``counterfact`` package as it is mapped by package-dir.

The subpackages live in top-level folders (``probes/`` is ``counterfact.probes``), which mypy cannot
map by itself. This stages the mapping with symlinks in a temporary folder and checks it there.

    python scripts/typecheck.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUBPACKAGES = ("probes", "verdicts", "orchestrator")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="counterfact-mypy-") as tmp:
        pkg = Path(tmp) / "counterfact"
        pkg.mkdir()
        for item in (ROOT / "counterfact").iterdir():
            if item.name != "__pycache__":
                (pkg / item.name).symlink_to(item)
        for sub in SUBPACKAGES:
            (pkg / sub).symlink_to(ROOT / sub, target_is_directory=True)
        cmd = [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "-p",
            "counterfact",
        ]
        return subprocess.call(cmd, cwd=tmp)


if __name__ == "__main__":
    sys.exit(main())
