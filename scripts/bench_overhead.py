"""Overhead of counterfact's Ray executor against plain Ray tasks and the ideal.

Runs in one process, on one local Ray instance (started first, warmed up, then timed):

1. a 20 ms sleeping runner, ``--runs`` runs on ``--workers`` workers, three ways: counterfact's
   sweep on the Ray executor (records written to a temporary run directory), plain Ray tasks
   (one task per run), and the ideal (total runner time / workers);
2. a runner that returns at once, ``--fast-runs`` runs: sustained runs per second, counterfact
   against plain Ray tasks.

Targets (issue 8): counterfact <= 1.08x ideal wall time on (1); >= 10,000 runs/s on (2).
The ratios are printed and appended, with the command, to ``docs/benchmarks.md``.

    python scripts/bench_overhead.py
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import ray
from benchlog import record

from counterfact.orchestrator.config.resolve import resolve_sweep
from counterfact.orchestrator.config.schema import SweepConfig
from counterfact.orchestrator.drivers.sweep import run_sweep

HERE = Path(__file__).resolve().parent


def sweep(runner: str, runs: int, out: Path) -> float:
    """Time one counterfact sweep of ``runs`` runs (2 arms x runs/2 seeds) on the Ray executor."""
    config = SweepConfig.model_validate(
        {
            "name": "bench",
            "runner": f"{HERE / 'bench_runners.py'}:{runner}",
            "samples": runs // 2,
            "arms": [{"id": "a"}, {"id": "b", "facets": {"x": 1}}],
            "comparator": {"kind": "exact"},
            "executor": {"kind": "ray"},
        }
    )
    resolved = resolve_sweep(config, base_dir=HERE)
    start = time.perf_counter()
    result = run_sweep(resolved, run_dir=out)
    elapsed = time.perf_counter() - start
    assert result.summary.execution.runs_used == runs, result.summary.execution.runs_used
    return elapsed


def plain_ray(fn: Any, runs: int) -> float:
    """Time ``runs`` plain Ray tasks, one per run, all submitted then gathered."""
    task = ray.remote(num_cpus=1)(fn)
    start = time.perf_counter()
    ray.get([task.remote(i) for i in range(runs)])
    return time.perf_counter() - start


def _sleep(_: int) -> str:
    time.sleep(0.02)
    return "done"


def _instant(_: int) -> str:
    return "done"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--fast-runs", type=int, default=20_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-record", action="store_true", help="do not append to docs")
    args = parser.parse_args()

    ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        # Warm-up: start the workers and import counterfact and the runners in them.
        sweep("instant", 200, root / "warm1")
        plain_ray(_instant, 200)
        sweep("sleep_20ms", 20, root / "warm2")

        ideal = args.runs * 0.02 / args.workers
        cf_slow = sweep("sleep_20ms", args.runs, root / "slow")
        ray_slow = plain_ray(_sleep, args.runs)
        cf_fast = sweep("instant", args.fast_runs, root / "fast")
        ray_fast = plain_ray(_instant, args.fast_runs)
    ray.shutdown()

    lines = [
        f"- 20 ms runner, {args.runs} runs, {args.workers} workers: ideal {ideal:.2f} s; "
        f"counterfact {cf_slow:.2f} s (**{cf_slow / ideal:.3f}x ideal**, target <= 1.08x); "
        f"plain Ray tasks {ray_slow:.2f} s ({ray_slow / ideal:.3f}x ideal)",
        f"- instant runner, {args.fast_runs} runs: counterfact "
        f"**{args.fast_runs / cf_fast:,.0f} runs/s** on a warm instance (target >= 10,000); "
        f"plain Ray tasks {args.fast_runs / ray_fast:,.0f} runs/s (one task per run)",
    ]
    print("\n".join(lines))
    if not args.no_record:
        record("bench_overhead", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
