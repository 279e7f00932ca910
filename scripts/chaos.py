"""Chaos: a larger sweep on Ray while random Ray worker processes are killed (SIGKILL).

Prints the runs expected, recorded, duplicated, lost and failed, and appends them with the
command to ``docs/benchmarks.md``. "Lost" means a planned (scenario, arm, seed) with no record;
"failed" runs are recorded with their error (a run whose worker was killed more often than
``infra_retries`` allows); "duplicated" counts extra records of one key.

    python scripts/chaos.py
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import ray
from benchlog import record

from counterfact.orchestrator.config.loading import validate_config
from counterfact.orchestrator.config.resolve import resolve_sweep
from counterfact.orchestrator.drivers.sweep import run_sweep
from counterfact.orchestrator.storage.recordfiles import RunLogReader

HERE = Path(__file__).resolve().parent


def ray_workers() -> list[int]:
    """Pids of Ray task workers on this machine: titles ``ray::IDLE`` / ``ray::<task>`` (Linux).

    Ray's own agents (``ray::DashboardAgent``, ``ray::RuntimeEnvAgent``) are not workers: killing
    them takes the node down, which is a different fault.
    """
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            title = (entry / "cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        if title.startswith(b"ray::") and not title.endswith(b"Agent"):
            found.append(int(entry.name))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arms", type=int, default=4)
    parser.add_argument("--samples", type=int, default=150)
    parser.add_argument("--kill-every-s", type=float, default=0.7)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    arms = [{"id": "base"}] + [
        {"id": f"arm{i}", "facets": {"answer": f"a{i}"}} for i in range(1, args.arms)
    ]
    config = validate_config(
        {
            "name": "chaos",
            "runner": f"{HERE / 'bench_runners.py'}:jittery",
            "samples": args.samples,
            "arms": arms,
            "comparator": {"kind": "exact"},
            "executor": {"kind": "ray", "infra_retries": 3},
        }
    )
    sweep = resolve_sweep(config, base_dir=HERE)
    kills = 0
    done = threading.Event()

    def killer() -> None:
        nonlocal kills
        while not done.wait(args.kill_every_s * rng.uniform(0.5, 1.5)):
            workers = ray_workers()
            if workers:
                try:
                    os.kill(rng.choice(workers), signal.SIGKILL)
                    kills += 1
                except ProcessLookupError:
                    pass

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "chaos"
        thread = threading.Thread(target=killer, daemon=True)
        start = time.perf_counter()
        thread.start()
        try:
            run_sweep(sweep, run_dir=out)
        finally:
            done.set()
            thread.join()
        elapsed = time.perf_counter() - start
        records = tuple(RunLogReader(out / "runs.jsonl"))
    ray.shutdown()
    expected = args.arms * args.samples
    counts = Counter((r.scenario, r.arm, r.seed) for r in records)
    duplicated = sum(c - 1 for c in counts.values() if c > 1)
    planned = {("default", a["id"], s) for a in arms for s in range(args.samples)}
    lost = len(planned - set(counts))
    failed = Counter(r.error.type for r in records if r.error is not None)
    line = (
        f"- {expected} runs ({args.arms} arms x {args.samples} seeds, 10-40 ms each) on 2 workers, "
        f"{kills} workers SIGKILLed at random (every ~{args.kill_every_s:g} s): expected "
        f"{expected}, recorded {len(records)}, **duplicated {duplicated}, lost {lost}**, failed "
        f"{sum(failed.values())} {dict(failed) or ''}; {elapsed:.1f} s"
    )
    lines = [line]
    print(line)
    if not args.no_record:
        record("chaos", lines)
    return 0 if duplicated == 0 and lost == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
