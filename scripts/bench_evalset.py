"""Eval sets end to end, against absolute targets (issue 26 item 5).

Every figure comes from a ``counterfact`` child process in a temporary directory, with an
instant runner (``bench_runners.py:rate_sleeper_fast``) on the local executor; each peak RSS is
that child's own (``os.wait4``). Printed with its target and the machine's load:

a. ``counterfact run`` of 2,000 questions x 3 arms x 5 seeds: wall and CPU time, stdout lines
   (targets: <= 60 s, <= 60 lines);
b. 10,000 questions x 4 arms x 5 seeds: judging (a second ``counterfact run`` on the finished
   directory reads every run back and only judges; target <= 10 s) and ``counterfact report``
   (target <= 30 s);
c. 1,000 questions x 4 arms x 250 seeds (a million runs): the driver's peak RSS running and
   judging them, and judging them again on resume (target <= 1 GiB), and ``counterfact export``'s
   (target <= 500 MB).

    python scripts/bench_evalset.py [--quick]   # --quick: (a), (b) a tenth; (c) 20,000 runs
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CLI = [sys.executable, "-m", "counterfact.orchestrator.cli"]
MIB = 1024 * 1024


def eval_set(folder: Path, questions: int, arms: int, seeds: int) -> Path:
    """Write the questions and the sweep config into ``folder``; the config's path."""
    folder.mkdir(parents=True)
    with (folder / "questions.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(questions):
            fh.write(json.dumps({"id": f"q{i}", "inputs": {"n": i}, "reference": "A"}) + "\n")
    config = {
        "name": "evalset",
        "runner": f"{HERE / 'bench_runners.py'}:rate_sleeper_fast",
        "samples": seeds,
        "scenarios": {"file": "questions.jsonl"},
        "comparator": {"kind": "exact"},
        "arms": [{"id": f"a{i}", "facets": {"rate": 0.05 * (i + 1)}} for i in range(arms)],
        "executor": {"kind": "local"},
    }
    path = folder / "sweep.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
    return path


def child(*args: str) -> dict[str, Any]:
    """Run ``counterfact ARGS``; its wall and CPU time, peak RSS and stdout line count."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen([*CLI, *args], stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        lines = len(out.read().splitlines())
    return {
        "code": proc.returncode,
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "rss_mib": usage.ru_maxrss / 1024,
        "lines": lines,
    }


def show(what: str, figure: str, target: str, found: dict[str, Any]) -> None:
    load = "/".join(f"{x:.2f}" for x in os.getloadavg())
    code = "" if found["code"] == 0 else f" [exit {found['code']}]"
    print(f"{what}: {figure} (target {target}); load {load}{code}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        # (a) the whole run
        config = eval_set(root / "a", 2_000 // scale, 3, 5)
        found = child("run", str(config), "--out", str(root / "a" / "out"))
        runs = 2_000 // scale * 15
        show(
            f"(a) run {runs:,} runs",
            f"{found['wall_s']:.1f} s wall, {found['cpu_s']:.1f} s CPU, "
            f"{found['lines']} stdout lines",
            "<= 60 s, <= 60 lines",
            found,
        )
        # (b) judging and reporting
        config = eval_set(root / "b", 10_000 // scale, 4, 5)
        out = root / "b" / "out"
        child("run", str(config), "--out", str(out))
        found = child("run", str(config), "--out", str(out))
        show(
            f"(b) judge {10_000 // scale * 20:,} recorded runs (resume, judge, write report)",
            f"{found['wall_s']:.1f} s wall, {found['cpu_s']:.1f} s CPU",
            "judged <= 10 s",
            found,
        )
        found = child("report", str(out))
        show("(b) report", f"{found['wall_s']:.1f} s wall", "<= 30 s", found)
        # (c) a million runs
        questions, seeds = (1_000, 250) if not args.quick else (100, 50)
        config = eval_set(root / "c", questions, 4, seeds)
        out = root / "c" / "out"
        runs = questions * 4 * seeds
        for step in ("run and judge", "resume and judge"):
            found = child("run", str(config), "--out", str(out))
            show(
                f"(c) {step} {runs:,} runs",
                f"driver peak RSS {found['rss_mib']:.0f} MiB, {found['wall_s']:.0f} s",
                "<= 1024 MiB",
                found,
            )
        found = child("export", str(out), "--format", "parquet")
        show(
            f"(c) export {runs:,} runs",
            f"peak RSS {found['rss_mib'] * MIB / 1e6:.0f} MB, {found['wall_s']:.0f} s",
            "<= 500 MB",
            found,
        )


if __name__ == "__main__":
    main()
