"""How long the ``counterfact`` command takes to answer, as the user runs it.

Each command is a whole new process of the venv's console script (``counterfact``, beside this
interpreter), started from another folder, run ``--repeat`` times in alternation with a bare
``python -c pass`` and with an eager import of the judging path, so the figures come from one
run on one machine. ``--tree`` measures another checkout (``PYTHONPATH`` points there: the old
code in a clone, for a before/after). Appends the result, with the machine's load, to
``docs/benchmarks.md``.

    python scripts/bench_cli_start.py [--repeat 7] [--tree /tmp/old]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlog import record

ROOT = Path(__file__).resolve().parent.parent
BAD = "name: x\nrunner: a.py:run\nsamples: many\narms: [{id: a}]\n"
"""A sweep file with a schema error (``samples`` is not a number)."""


def commands(tree: Path, out: Path) -> dict[str, list[str]]:
    py = sys.executable
    cli = str(Path(py).parent / "counterfact")
    return {
        "python -c pass": [py, "-c", "pass"],
        "counterfact --help": [cli, "--help"],
        "counterfact --version": [cli, "--version"],
        "counterfact schema": [cli, "schema"],
        "counterfact run missing.yaml": [cli, "run", "missing.yaml"],
        "counterfact run bad.yaml (schema error)": [cli, "run", "bad.yaml"],
        "counterfact validate configs/quickstart.yaml": [
            cli,
            "validate",
            str(tree / "configs" / "quickstart.yaml"),
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


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, cwd=cwd, env=env, check=False)
    elapsed = time.perf_counter() - t0
    if done.returncode not in (0, 2):  # 2: the bad-input commands, as expected
        raise SystemExit(f"{cmd} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return elapsed


def load() -> str:
    """``uptime``'s load averages (1, 5, 15 min) and the CPU count."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} CPUs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--tree", type=Path, default=ROOT, help="checkout to measure")
    args = parser.parse_args()
    tree = args.tree.resolve()
    env = {**os.environ, "PYTHONPATH": str(tree)}
    before = load()
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        (cwd / "bad.yaml").write_text(BAD, encoding="utf-8")
        cmds = commands(tree, cwd / "o")
        times: dict[str, list[float]] = {name: [] for name in cmds}
        for _ in range(args.repeat):
            for name, cmd in cmds.items():
                times[name].append(timed(cmd, cwd, env))
    base = statistics.median(times["python -c pass"])
    lines = [f"- code measured: `{tree}`; before: {before}; after: {load()}"]
    for name, values in times.items():
        med = statistics.median(values)
        lines.append(
            f"- {name}: median {med:.3f} s (min {min(values):.3f}, max {max(values):.3f}); "
            f"{med / base:.1f}x a bare interpreter"
        )
    lines.append(
        f"- over {args.repeat} alternated runs each, whole processes of the console script from "
        "a temporary folder; target: help, version, schema and bad input under 0.3 s"
    )
    print("\n".join(lines))
    record("bench_cli_start", lines)


if __name__ == "__main__":
    main()
