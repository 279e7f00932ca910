"""How long the ``counterfact`` command takes to answer, as the user runs it.

Each command is a whole new process of the venv's console script (``counterfact``, beside this
interpreter), started from another folder, run ``--repeat`` times in alternation with a bare
``python -c pass`` and with an eager import of the judging path, so the figures come from one
run on one machine. Each row gives the wall time and the CPU time (user + sys of the process,
which a loaded machine disturbs less than the wall), each also as a ratio to ``python -c pass``
in the same run. ``--tree NAME=PATH`` measures a checkout (``PYTHONPATH`` points there: the old
code in a worktree, for a before/after); given several, their runs alternate too, and each row
says its ratio to the first tree's. Appends the result, with the machine's load, to
``docs/benchmarks.md`` (not with ``--no-record``).

    python scripts/bench_cli_start.py [--repeat 7] [--tree main=/work/main --tree new=.]
"""

from __future__ import annotations

import argparse
import os
import resource
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
BAD_FIELD = "name: x\nrunner: a.py:run\nsampels: 5\narms: [{id: a}]\n"
"""A sweep file with a misspelt field (``sampels``)."""


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
        "counterfact run field.yaml (unknown field)": [cli, "run", "field.yaml"],
        "counterfact validate field.yaml (unknown field)": [cli, "validate", "field.yaml"],
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


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + sys) seconds of one whole process of ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, cwd=cwd, env=env, check=False)
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 2):  # 2: the bad-input commands, as expected
        raise SystemExit(f"{cmd} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def load() -> str:
    """``uptime``'s load averages (1, 5, 15 min) and the CPU count."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} CPUs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument(
        "--tree", action="append", default=[], metavar="NAME=PATH", help="checkout to measure"
    )
    parser.add_argument("--no-record", action="store_true", help="print, do not append")
    args = parser.parse_args()
    named = (t.partition("=") for t in args.tree)
    trees = {n: Path(p or n).resolve() for n, _, p in named} or {"this checkout": ROOT}
    before = load()
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        (cwd / "bad.yaml").write_text(BAD, encoding="utf-8")
        (cwd / "field.yaml").write_text(BAD_FIELD, encoding="utf-8")
        cmds = {name: commands(tree, cwd / "o") for name, tree in trees.items()}
        times: dict[tuple[str, str], list[float]] = {(t, c): [] for t in trees for c in cmds[t]}
        cpus: dict[tuple[str, str], list[float]] = {key: [] for key in times}
        for _ in range(args.repeat):
            for name, cmd_name in ((t, c) for c in cmds[next(iter(trees))] for t in trees):
                env = {**os.environ, "PYTHONPATH": str(trees[name])}
                wall, cpu = timed(cmds[name][cmd_name], cwd, env)
                times[name, cmd_name].append(wall)
                cpus[name, cmd_name].append(cpu)
    first = next(iter(trees))
    where = "; ".join(f"{n} `{p}`" for n, p in trees.items())
    lines = [f"- code measured: {where}; before: {before}; after: {load()}"]
    for (tree, name), values in times.items():
        med = statistics.median(values)
        base = statistics.median(times[tree, "python -c pass"])
        cpu = statistics.median(cpus[tree, name])
        cpu_base = statistics.median(cpus[tree, "python -c pass"])
        ratio = med / statistics.median(times[first, name])
        lines.append(
            f"- {name}{f' [{tree}]' if len(trees) > 1 else ''}: median {med:.3f} s "
            f"(min {min(values):.3f}, max {max(values):.3f}); {med / base:.1f}x a bare "
            f"interpreter; CPU median {cpu:.3f} s, {cpu / cpu_base:.1f}x the bare interpreter's"
            + (f"; {ratio:.2f}x {first}'s" if tree != first else "")
        )
    lines.append(
        f"- over {args.repeat} alternated runs each, whole processes of the console script from "
        "a temporary folder; target: help, version, schema and bad input under 0.3 s"
    )
    print("\n".join(lines))
    if not args.no_record:
        record("bench_cli_start", lines)


if __name__ == "__main__":
    main()
