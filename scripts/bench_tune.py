"""The same grid three ways, side by side in one run: counterfact, Ray Tune trials, plain Ray tasks.

A grid of ``--arms`` x ``--seeds`` runs of an instant runner, on one local Ray instance (started
once, warmed up): counterfact's sweep (records written and judged), one Ray Tune trial per run
(``tune.grid_search`` over arm and seed; the ``bench`` extra installs ``ray[tune]``), and one
plain Ray task per run. Prints each one's per-run overhead (wall time / runs) and appends the
result, with the command, to ``docs/benchmarks.md``.

    pip install -e ".[bench]"
    python scripts/bench_tune.py [--arms 2 --seeds 100]
"""

from __future__ import annotations

import argparse
import os
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


def counterfact_grid(arms: int, seeds: int, out: Path) -> float:
    config = SweepConfig.model_validate(
        {
            "name": "grid",
            "runner": f"{HERE / 'bench_runners.py'}:instant",
            "samples": seeds,
            "arms": [{"id": "a0"}] + [{"id": f"a{i}", "facets": {"x": i}} for i in range(1, arms)],
            "comparator": {"kind": "exact"},
            "executor": {"kind": "ray"},
        }
    )
    start = time.perf_counter()
    run_sweep(resolve_sweep(config, base_dir=HERE), run_dir=out)
    return time.perf_counter() - start


def _trial(config: dict[str, Any]) -> None:
    from ray import tune

    tune.report({"output": "done", "arm": config["arm"], "seed": config["seed"]})


def tune_grid(arms: int, seeds: int, storage: Path) -> float:
    from ray import tune

    space = {
        "arm": tune.grid_search(list(range(arms))),
        "seed": tune.grid_search(list(range(seeds))),
    }
    tuner = tune.Tuner(
        _trial,
        param_space=space,
        tune_config=tune.TuneConfig(max_concurrent_trials=2),
        run_config=tune.RunConfig(storage_path=str(storage), verbose=0),
    )
    start = time.perf_counter()
    results = tuner.fit()
    elapsed = time.perf_counter() - start
    assert len(results) == arms * seeds, len(results)
    assert not results.errors, results.errors
    return elapsed


def _task(arm: int, seed: int) -> str:
    return "done"


def plain_grid(arms: int, seeds: int) -> float:
    task = ray.remote(num_cpus=1)(_task)
    start = time.perf_counter()
    ray.get([task.remote(a, s) for a in range(arms) for s in range(seeds)])
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arms", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=100)
    args = parser.parse_args()
    os.environ.setdefault("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "1")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    runs = args.arms * args.seeds
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        counterfact_grid(2, 20, root / "warm")  # start workers, import counterfact in them
        plain_grid(2, 20)
        times = {
            "counterfact sweep": counterfact_grid(args.arms, args.seeds, root / "cf"),
            "Ray Tune trials": tune_grid(args.arms, args.seeds, root / "tune"),
            "plain Ray tasks": plain_grid(args.arms, args.seeds),
        }
    ray.shutdown()
    lines = [
        f"- {name}: {t:.2f} s for {runs} runs, **{1000 * t / runs:.2f} ms per run**"
        for name, t in times.items()
    ]
    lines.append(f"- grid {args.arms} arms x {args.seeds} seeds, instant runner, 2 CPUs")
    print("\n".join(lines))
    record("bench_tune", lines)


if __name__ == "__main__":
    main()
