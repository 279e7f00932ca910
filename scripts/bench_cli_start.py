"""How long ``counterfact --version`` and ``counterfact validate`` take to start, as ratios.

Each command is a whole new process, run ``--repeat`` times in alternation with a bare
``python -c pass`` and with an eager import of the judging path (what ``--version`` used to pay),
so the ratios come from one run on one machine. Appends the result to ``docs/benchmarks.md``.

    python scripts/bench_cli_start.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlog import record

ROOT = Path(__file__).resolve().parent.parent
CLI = "from counterfact.orchestrator.cli import main; main()"


def commands(out: Path) -> dict[str, list[str]]:
    py = sys.executable
    quickstart = str(ROOT / "configs" / "quickstart.yaml")
    return {
        "python -c pass": [py, "-c", "pass"],
        "counterfact --version": [py, "-c", CLI, "--version"],
        "counterfact validate quickstart": [
            py,
            "-c",
            CLI,
            "validate",
            quickstart,
            "--out",
            str(out),
        ],
        "eager import (engine+scipy+ray)": [
            py,
            "-c",
            "import counterfact.orchestrator.drivers.sweep, counterfact.verdicts.stats.intervals,"
            " ray",
        ],
    }


def timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cmds = commands(Path(tmp) / "o")
        times: dict[str, list[float]] = {name: [] for name in cmds}
        for _ in range(args.repeat):
            for name, cmd in cmds.items():
                times[name].append(timed(cmd))
    base = statistics.median(times["python -c pass"])
    lines = []
    for name, values in times.items():
        med = statistics.median(values)
        lines.append(
            f"- {name}: median {med:.3f} s (min {min(values):.3f}, max {max(values):.3f}); "
            f"{med / base:.1f}x a bare interpreter"
        )
    lines.append(
        f"- over {args.repeat} alternated runs each; target: --version and validate under 0.3 s"
    )
    print("\n".join(lines))
    record("bench_cli_start", lines)


if __name__ == "__main__":
    main()
