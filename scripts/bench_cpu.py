"""The CPU path as a user runs it: marginal runs/s of an instant runner, and a 20 ms runner
against the ideal, each sweep a whole ``counterfact run`` process (start-up, the executor the
CLI chooses, judging and ``report.html`` included) started from another folder.

"Marginal" takes start-up out: two sweeps of different sizes, the extra runs over the extra
wall seconds (instant runner; default 50,000 and 250,000 runs: 25,000 and 125,000 seeds of two
arms on one question), or the extra wall seconds against the ideal for the extra runs (20 ms of
computation per run, default 800 and 1,600 runs; ideal = extra runs x 20 ms / the CPUs). Wall
time is measured from outside the process (start to exit). ``--no-report`` measures the trimmed
path earlier rows used; a user's command writes the report.

Several checkouts can be measured in one invocation (``--tree NAME=PATH``, each put first on
``PYTHONPATH``), their sweeps alternated, so before/after figures share the machine's weather:

    python scripts/bench_cpu.py --tree before=/tmp/base --tree after=. --repeat 2
    python scripts/bench_cpu.py --part instant --part local

Parts: ``instant`` and ``20ms`` (the CLI's default executor: Ray for a sync runner), ``local``
(the instant runner in-process). ``--record`` appends the result to ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
RUNNERS = ROOT / "scripts" / "bench_io_runner.py"
RUN_S = 0.02


@dataclass
class Measured:
    """One checkout's sweeps of one part, by size, one list entry per repeat: wall seconds,
    ``summary.json``'s execution seconds, CPU seconds by process kind.
    """

    walls: dict[int, list[float]] = field(default_factory=dict)
    execution: dict[int, list[float]] = field(default_factory=dict)
    cpu: dict[int, list[dict[str, float]]] = field(default_factory=dict)


KINDS = ("driver", "workers", "ray daemons")


class TreeCpu:
    """Polls the CPU seconds of a process and its descendants every ``every_s``: the last
    reading of each process is kept (a process's last ``every_s`` before it exits is missed:
    Ray's workers then sit idle, the sweep being over).
    """

    def __init__(self, pid: int, every_s: float = 0.25) -> None:
        self.root = psutil.Process(pid)
        self.every_s = every_s
        self.seen: dict[int, tuple[str, float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _kind(self, proc: psutil.Process) -> str:
        if proc.pid == self.root.pid:
            return "driver"
        cmd = " ".join(proc.cmdline())
        return "workers" if "default_worker" in cmd or proc.name().startswith("ray::") else KINDS[2]

    def _poll(self) -> None:
        while not self._stop.is_set():
            with suppress(psutil.Error):
                for proc in [self.root, *self.root.children(recursive=True)]:
                    with suppress(psutil.Error):
                        kind = self.seen[proc.pid][0] if proc.pid in self.seen else self._kind(proc)
                        times = proc.cpu_times()
                        self.seen[proc.pid] = (kind, times.user + times.system)
            self._stop.wait(self.every_s)

    def stop(self) -> dict[str, float]:
        self._stop.set()
        self._thread.join()
        totals = dict.fromkeys(KINDS, 0.0)
        for kind, seconds in self.seen.values():
            totals[kind] += seconds
        return totals


def sweep(
    tree: Path, runner: str, runs: int, executor: str | None, report: bool = True
) -> tuple[float, float, dict[str, float]]:
    """One ``counterfact run`` (two arms, ``runs / 2`` seeds) as a user types it, from another
    folder, with the executor the CLI chooses (``executor=None``) and its report: wall seconds
    from outside, the execution seconds ``summary.json`` reports, and CPU seconds by process kind.
    """
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "sweep.yaml"
        cfg.write_text(
            f"name: cpu\nrunner: {RUNNERS}:{runner}\nsamples: {runs // 2}\nreference: 'yes'\n"
            "comparator: {kind: exact}\narms: [{id: a}, {id: b, facets: {x: 1}}]\n"
            + (f"executor: {{kind: {executor}}}\n" if executor else ""),
            encoding="utf-8",
        )
        env = {**os.environ, "PYTHONPATH": str(tree)}
        cmd = [sys.executable, "-m", "counterfact.orchestrator.cli", "run", str(cfg)]
        started = time.perf_counter()
        proc = subprocess.Popen(
            [*cmd, "--out", f"{tmp}/o", *([] if report else ["--no-report"])],
            cwd=tmp,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        cpu = TreeCpu(proc.pid)
        _, err = proc.communicate()
        wall = time.perf_counter() - started
        seconds = cpu.stop()
        if proc.returncode != 0:
            raise SystemExit(f"{tree}: exit {proc.returncode}\n{err.decode()[-3000:]}")
        summary = json.loads((Path(tmp) / "o" / "summary.json").read_text(encoding="utf-8"))
        recorded = sum(1 for _ in (Path(tmp) / "o" / "runs.jsonl").open("rb"))
    if recorded != runs:
        raise SystemExit(f"{tree}: {recorded} records for {runs} runs")
    return wall, float(summary["execution"]["timings"]["execution_s"]), seconds


PARTS: dict[str, tuple[str, str | None]] = {
    "instant": ("instant", None),
    "20ms": ("busy_20ms", None),
    "local": ("instant", "local"),
}
"""Each part's runner and executor (None: the CLI's own choice, Ray for these sync runners)."""


def measure(
    trees: dict[str, Path], part: str, sizes: tuple[int, int], repeat: int, report: bool
) -> dict[str, Measured]:
    """Every tree's sweeps of ``part``, alternated: tree by tree within each repeat."""
    runner, executor = PARTS[part]
    found = {name: Measured() for name in trees}
    for _ in range(repeat):
        for name, tree in trees.items():
            for size in sizes:
                wall, execution, cpu = sweep(tree, runner, size, executor, report)
                found[name].walls.setdefault(size, []).append(wall)
                found[name].execution.setdefault(size, []).append(execution)
                found[name].cpu.setdefault(size, []).append(cpu)
                print(f"  {part} {name} {size:,}: {wall:.1f} s", file=sys.stderr, flush=True)
    return found


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _cpu_per_run(m: Measured, small: int, big: int) -> str:
    """Marginal CPU microseconds per run of each process kind (medians of the repeats)."""
    extra = big - small

    def at(size: int, kind: str) -> float:
        return _median([c[kind] for c in m.cpu[size]])

    return " / ".join(f"{(at(big, k) - at(small, k)) / extra * 1e6:,.0f}" for k in KINDS)


def describe(part: str, sizes: tuple[int, int], got: dict[str, Measured], cpus: int) -> list[str]:
    """One table row per tree: wall times (median of repeats), the marginal figure, and the
    marginal CPU per run of the driver, Ray's workers and Ray's own processes.
    """
    small, big = sizes
    extra = big - small
    ideal = extra * RUN_S / cpus
    walls, cpu_head = f"wall {small:,} / {big:,} (s)", "CPU µs/run: " + " / ".join(KINDS)
    if part == "20ms":
        rows = [f"| {part} | tree | {walls} | marginal vs ideal ({ideal:.0f} s) | {cpu_head} |"]
    else:
        rows = [f"| {part} | tree | {walls} | marginal runs/s | execution only | {cpu_head} |"]
    rows.append("|---|---|---|---|---|" + ("---|" if part != "20ms" else ""))
    for name, m in got.items():
        ws, wb = _median(m.walls[small]), _median(m.walls[big])
        xs, xb = _median(m.execution[small]), _median(m.execution[big])
        cpu = _cpu_per_run(m, small, big)
        if part == "20ms":
            figure = f"**{(wb - ws) / ideal:.3f}x** (execution only {(xb - xs) / ideal:.3f}x)"
        else:
            figure = f"**{extra / (wb - ws):,.0f}** | {extra / (xb - xs):,.0f}"
        rows.append(f"| {part} | {name} | {ws:.1f} / {wb:.1f} | {figure} | {cpu} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", metavar="NAME=PATH", default=[])
    parser.add_argument("--part", action="append", choices=sorted(PARTS))
    parser.add_argument("--instant", type=int, nargs=2, default=(50_000, 250_000))
    parser.add_argument("--slow", type=int, nargs=2, default=(800, 1_600))
    parser.add_argument(
        "--no-report", action="store_true", help="the trimmed path: no report.html (not a user's)"
    )
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--record", action="store_true", help="append to docs/benchmarks.md")
    args = parser.parse_args()
    trees = {n: Path(p).resolve() for n, _, p in (t.partition("=") for t in args.tree)}
    trees = trees or {"this checkout": ROOT}
    cpus = os.cpu_count() or 1
    lines = []
    for part in args.part or ["instant", "20ms"]:
        sizes = tuple(args.slow if part == "20ms" else args.instant)
        got = measure(trees, part, (sizes[0], sizes[1]), args.repeat, not args.no_report)
        lines += [*describe(part, (sizes[0], sizes[1]), got, cpus), ""]
    load = os.getloadavg()[0]
    lines.append(
        f"{cpus} CPUs, median of {args.repeat} repeat(s), load average at the end {load:.1f}"
    )
    print("\n".join(lines))
    if args.record:
        sys.path.insert(0, str(ROOT / "scripts"))
        from benchlog import record

        record("bench_cpu", lines)


if __name__ == "__main__":
    main()
