"""Judging at eval-set scale: how long the driver takes to judge recorded runs.

Builds (once, in ``--dir``) an eval set of ``--questions`` JSONL questions x ``--arms`` arms x
``--seeds`` seeds of an instant runner (``bench_runners.py:rate_sleeper_fast``: answers ``B``
instead of the reference ``A`` at each arm's rate), runs it on the local executor, then resumes
the finished directory: every run is read back and only judged. Prints the resume's wall time
and the time inside the judging step (``sweep._judge``); ``--profile FILE`` writes a cProfile
of the resume (read it with ``python -m pstats FILE``).

``--expect same`` gives every question its own check (``expect: {kind: exact}``, one spec for
all), ``--expect distinct`` a different regex per question (10,000 patterns); the runs do not
depend on the checks, so one ``--dir`` serves every variant (each resume only re-judges).

    python scripts/bench_judging.py [--questions 10000 --arms 4 --seeds 5] [--dir D]
        [--comparator exact|regex] [--expect none|same|distinct] [--profile judge.prof]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


PATTERN = "([AB])"
"""The regex comparator's pattern: the answer letter."""


def _expect(expect: str, i: int) -> dict[str, Any]:
    """Question ``i``'s own check: none, the same for all, or a regex of its own."""
    if expect == "same":
        return {"expect": {"kind": "exact"}}
    if expect == "distinct":  # a second alternative no answer matches: one pattern per question
        return {"expect": {"kind": "regex", "pattern": f"{PATTERN}|(never{i}here)"}}
    return {}


def write_eval_set(
    folder: Path, questions: int, arms: int, seeds: int, comparator: str, expect: str = "none"
) -> Path:
    """The questions file and the sweep config; the config's path."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "questions.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(questions):
            row = {"id": f"q{i}", "inputs": {"question": f"question {i}?"}, "reference": "A"}
            fh.write(json.dumps(row | _expect(expect, i)) + "\n")
    arm_list: list[dict[str, Any]] = [{"id": "a0", "facets": {"rate": 0.05}}]
    arm_list += [{"id": f"a{i}", "facets": {"rate": 0.05 * (i + 1)}} for i in range(1, arms)]
    config = {
        "name": "bench-evalset",
        "runner": f"{HERE / 'bench_runners.py'}:rate_sleeper_fast",
        "samples": seeds,
        "scenarios": {"file": "questions.jsonl"},
        "comparator": {"kind": comparator}
        | ({"pattern": PATTERN} if comparator == "regex" else {}),
        "arms": arm_list,
        "executor": {"kind": "local"},
    }
    path = folder / "sweep.yaml"
    path.write_text(json.dumps(config, indent=1), encoding="utf-8")  # JSON is YAML
    return path


def judge_once(config: Path, out: Path, profile: Path | None) -> dict[str, float]:
    """Run (or resume) the sweep in this process; wall time and the time spent judging."""
    from counterfact.orchestrator.config.loading import load_sweep
    from counterfact.orchestrator.drivers import sweep as driver

    spent = {"judge_s": 0.0, "judge_cpu_s": 0.0, "resolve_s": 0.0}
    judge = driver._judge

    def timed(*args: Any, **kwargs: Any) -> Any:
        start, cpu = time.perf_counter(), time.process_time()
        try:
            return judge(*args, **kwargs)
        finally:
            spent["judge_s"] += time.perf_counter() - start
            spent["judge_cpu_s"] += time.process_time() - cpu

    driver._judge = timed  # type: ignore[assignment]
    profiler = cProfile.Profile() if profile else None
    start, cpu = time.perf_counter(), time.process_time()
    try:
        resolved = load_sweep(config)
        spent["resolve_s"] = time.perf_counter() - start
        if profiler is not None:
            profiler.enable()
        driver.run_sweep(resolved, run_dir=out)
    finally:
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(str(profile))
        driver._judge = judge  # type: ignore[assignment]
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"wall_s": wall, "cpu_s": cpu, **spent}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--arms", type=int, default=4)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--comparator", default="exact")
    parser.add_argument("--expect", choices=("none", "same", "distinct"), default="none")
    parser.add_argument("--dir", type=Path, help="keep the eval set and its runs here")
    parser.add_argument("--profile", type=Path, help="write a cProfile of the resume here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.dir or Path(tmp)
        out = folder / "out"
        config = write_eval_set(
            folder, args.questions, args.arms, args.seeds, args.comparator, args.expect
        )
        if not (out / "verdicts.jsonl").exists():
            built = judge_once(config, out, None)
            print(f"built: {built['wall_s']:.1f} s (running and judging)")
        found = judge_once(config, out, args.profile)
        runs = args.questions * args.arms * args.seeds
        load = "/".join(f"{x:.2f}" for x in os.getloadavg())
        print(
            f"resumed {runs:,} runs: {found['wall_s']:.1f} s in all "
            f"(resolving the sweep {found['resolve_s']:.1f} s) "
            f"({found['cpu_s']:.1f} s CPU), {found['judge_s']:.1f} s judging "
            f"({found['judge_cpu_s']:.1f} s CPU; target <= 10 s); load {load}; "
            f"comparator {args.comparator}, expect {args.expect}"
        )


if __name__ == "__main__":
    main()
