"""Append a measured result, with the command that produced it, to docs/benchmarks.md."""

from __future__ import annotations

import platform
import shlex
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"


def record(script: str, lines: Sequence[str]) -> None:
    """Append a section for ``scripts/<script>.py`` run with this process's arguments."""
    import ray

    cmd = "python " + " ".join(shlex.quote(a) for a in [f"scripts/{script}.py", *sys.argv[1:]])
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    header = (
        f"\n### {script} — {stamp}\n\nCommand: `{cmd}` (Python {platform.python_version()}, "
        f"Ray {ray.__version__}, {platform.machine()}, shared machine)\n\n"
    )
    if not DOCS.exists():
        DOCS.write_text("# Benchmarks\n", encoding="utf-8")
    with DOCS.open("a", encoding="utf-8") as fh:
        fh.write(header + "\n".join(lines) + "\n")
