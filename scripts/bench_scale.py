"""Sweeps at scale: linear time, bounded driver memory, a million runs on Ray.

Every measured sweep runs in a fresh child process (``--one``), so each peak RSS is that sweep's
own (``ru_maxrss`` of the driver process; Ray's workers are other processes). Instant runner,
records written to a temporary run directory, verdicts judged at the end.

1. in-process (local executor), 2 arms: 20,000 and 80,000 runs; the time ratio (~4x is linear)
   and each peak RSS;
2. on Ray: ``--scenarios`` x 4 arms x ``--seeds`` (default 1,000 x 4 x 250 = one million runs):
   wall time, runs/s and driver peak RSS (target <= 1 GiB);
3. on Ray, marginal throughput: a 20,000- and a 100,000-run sweep on one warm Ray instance in
   one process (start-up and warm-up excluded), extra runs / extra seconds.

Results are printed and appended, with the command, to ``docs/benchmarks.md``.

    python scripts/bench_scale.py [--scenarios 1000 --seeds 250] [--skip-million]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchlog import record

HERE = Path(__file__).resolve().parent


def sweep_config(executor: str, scenarios: int, arms: int, seeds: int) -> dict[str, Any]:
    return {
        "name": "scale",
        "runner": f"{HERE / 'bench_runners.py'}:instant",
        "samples": seeds,
        "arms": [{"id": "a0"}] + [{"id": f"a{i}", "facets": {"x": i}} for i in range(1, arms)],
        "scenarios": [{"id": f"s{i}", "inputs": {"i": i}} for i in range(scenarios)],
        "comparator": {"kind": "exact"},
        "executor": {"kind": executor},
    }


def one(executor: str, scenarios: int, arms: int, seeds: int) -> dict[str, float]:
    """Run one sweep in this process; its wall time and this process's peak RSS."""
    from counterfact.orchestrator.config.resolve import resolve_sweep
    from counterfact.orchestrator.config.schema import SweepConfig
    from counterfact.orchestrator.drivers.sweep import run_sweep

    config = SweepConfig.model_validate(sweep_config(executor, scenarios, arms, seeds))
    resolved = resolve_sweep(config, base_dir=HERE)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = run_sweep(resolved, run_dir=Path(tmp) / "o")
        wall = time.perf_counter() - start
        longest = max(len(line) for line in (Path(tmp) / "o" / "verdicts.jsonl").open("rb"))
    runs = scenarios * arms * seeds
    assert result.summary.execution.runs_used == runs, (result.summary.execution.runs_used, runs)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"runs": runs, "wall_s": wall, "rss_mb": rss_mb, "longest_verdict_line": longest}


def marginal() -> dict[str, float]:
    """Two sweeps on one warm Ray instance: their wall times."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    one("ray", 1, 2, 1_000)  # warm-up: workers started, counterfact imported in them
    small, large = one("ray", 1, 2, 10_000), one("ray", 1, 2, 50_000)
    ray.shutdown()
    return {
        "small": small["runs"],
        "small_s": small["wall_s"],
        "large": large["runs"],
        "large_s": large["wall_s"],
    }


def child(executor: str, scenarios: int, arms: int, seeds: int) -> dict[str, float]:
    """:func:`one` in a fresh process (``executor`` ``marginal``: :func:`marginal`)."""
    cmd = [sys.executable, __file__, "--one", executor, str(scenarios), str(arms), str(seeds)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def describe(r: dict[str, float]) -> str:
    return (
        f"{int(r['runs']):,} runs: {r['wall_s']:.1f} s ({r['runs'] / r['wall_s']:,.0f} runs/s), "
        f"driver peak RSS {r['rss_mb']:,.0f} MB, longest verdicts.jsonl line "
        f"{int(r['longest_verdict_line']):,} bytes"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one", nargs=4, metavar=("EXECUTOR", "SCENARIOS", "ARMS", "SEEDS"))
    parser.add_argument("--scenarios", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=250)
    parser.add_argument("--skip-million", action="store_true")
    args = parser.parse_args()
    if args.one:
        kind, *sizes = args.one
        result = marginal() if kind == "marginal" else one(kind, *(int(x) for x in sizes))
        print(json.dumps(result))
        return
    lines = []
    small, large = child("local", 1, 2, 10_000), child("local", 1, 2, 40_000)
    ratio = large["wall_s"] / small["wall_s"]
    lines.append(f"- in-process, {describe(small)}")
    lines.append(f"- in-process, {describe(large)}")
    lines.append(f"- in-process 80k / 20k time ratio: **{ratio:.2f}x** (4x is linear)")
    m = child("marginal", 0, 0, 0)
    rate = (m["large"] - m["small"]) / (m["large_s"] - m["small_s"])
    lines.append(
        f"- Ray, warm instance: {int(m['small']):,} runs in {m['small_s']:.2f} s, "
        f"{int(m['large']):,} runs in {m['large_s']:.2f} s; marginal throughput "
        f"**{rate:,.0f} runs/s** (target >= 10,000)"
    )
    if not args.skip_million:
        big = child("ray", args.scenarios, 4, args.seeds)
        lines.append(
            f"- Ray, {args.scenarios:,} scenarios x 4 arms x {args.seeds} seeds: "
            f"**{describe(big)}**"
        )
    print("\n".join(lines))
    record("bench_scale", lines)


if __name__ == "__main__":
    main()
