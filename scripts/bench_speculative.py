"""Sequential against speculative culprit bisection: wall time and probes spent, one process.

An I/O-bound runner (it sleeps ``--run-s`` seconds, like an API call) answers wrong while one
culprit among ``--suspects`` ranked ids is present. Both searches run on one local Ray instance
with ``2 x samples`` logical CPUs, so every run of two probes can overlap (what
``executor.num_cpus`` does for the local instance the CLI starts). Prints both
figures and appends them, with the command, to ``docs/benchmarks.md``.

    python scripts/bench_speculative.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import ray
from benchlog import record

from counterfact import find_culprits

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suspects", type=int, default=16)
    parser.add_argument("--culprit", type=int, default=11, help="rank of the culprit (0-based)")
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--run-s", type=float, default=0.2)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    suspects = [f"fact:{i}" for i in range(args.suspects)]
    ray.init(num_cpus=2 * args.samples, include_dashboard=False, log_to_driver=False)
    figures = {}
    # The first pass starts the Ray worker processes (one per logical CPU);
    # only the second pass is timed.
    for speculative in (True, False, True):
        result = find_culprits(
            suspects,
            f"{HERE / 'bench_runners.py'}:culprit_sleeper",
            samples=args.samples,
            inputs={"culprit": suspects[args.culprit], "run_s": args.run_s},
            reference="wrong",
            comparator="exact",
            executor={"kind": "ray"},
            speculative=speculative,
            max_probes=64,
        )
        rec = result.record
        assert rec.culprits == [[suspects[args.culprit]]], rec.culprits
        figures[speculative] = (rec.wall_time_s, rec.probes_executed, rec.execution.runs_used)
    ray.shutdown()
    (seq_t, seq_p, seq_r), (spec_t, spec_p, spec_r) = figures[False], figures[True]
    lines = [
        f"- {args.suspects} suspects, culprit ranked {args.culprit + 1}, {args.samples} samples, "
        f"{args.run_s:g} s per run: sequential {seq_t:.2f} s, {seq_p} probes, {seq_r} runs; "
        f"speculative {spec_t:.2f} s, {spec_p} probes, {spec_r} runs "
        f"(**{spec_t / seq_t:.2f}x the wall time for {spec_p / seq_p:.2f}x the probes**)",
    ]
    print("\n".join(lines))
    if not args.no_record:
        record("bench_speculative", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
