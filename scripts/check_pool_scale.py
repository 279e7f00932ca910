"""Does the Ray worker pool hold at eval-set scale? Every run recorded once, none lost.

Writes an eval set of ``--questions`` questions (default 10,000) and an ``async def`` runner
that waits 10 ms (an API call's shape) and flips the challenger on one seed in seven, runs
``counterfact run`` on a local Ray instance with ``--concurrency`` runs in flight (default 500)
over ``--seeds`` seeds (default 5) and two arms, then reads ``runs.jsonl`` back and counts the
distinct (scenario, arm, seed) records, the duplicates and the errors. Prints the wall time and
the driver's peak resident memory (``resource.getrusage`` of the child; Ray's own processes are
not counted).

    python scripts/check_pool_scale.py [--questions 10000] [--seeds 5] [--concurrency 500]

Exit 0 when every run is recorded exactly once without an error and the sweep exited 0.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

RUNNER = """import asyncio

from counterfact import RunContext, RunResult


async def run(ctx: RunContext) -> RunResult:
    await asyncio.sleep(0.01)
    flip = ctx.arm.id == "alt" and (ctx.seed + int(ctx.scenario.id[1:])) % 7 == 0
    return RunResult(output="no" if flip else "yes", cost={"tokens": 5.0})
"""


def sweep(folder: Path, questions: int, seeds: int, concurrency: int) -> Path:
    """Write the runner, the questions and the sweep file into ``folder``."""
    (folder / "agent.py").write_text(RUNNER, encoding="utf-8")
    with (folder / "qs.jsonl").open("w", encoding="utf-8") as f:
        for i in range(questions):
            f.write(json.dumps({"id": f"q{i}", "inputs": {}, "reference": "yes"}) + "\n")
    path = folder / "s.yaml"
    path.write_text(
        "name: pool-scale\nrunner: agent.py:run\n"
        f"samples: {seeds}\nscenarios: {{file: qs.jsonl}}\ncomparator: {{kind: exact}}\n"
        "arms: [{id: base}, {id: alt, facets: {x: 1}}]\n"
        f"executor: {{kind: ray, concurrency: {concurrency}}}\n",
        encoding="utf-8",
    )
    return path


def counts(runs: Path) -> tuple[int, int, int]:
    """Distinct (scenario, arm, seed) records, duplicated keys, and runs with an error."""
    seen: Counter[tuple[str, str, int]] = Counter()
    errors = 0
    with runs.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if "seed" not in row:  # the header line
                continue
            seen[(row["scenario"], row["arm"], row["seed"])] += 1
            errors += row.get("error") is not None
    return len(seen), sum(n > 1 for n in seen.values()), errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=500)
    args = parser.parse_args()
    cli = Path(sys.executable).parent / "counterfact"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = sweep(folder, args.questions, args.seeds, args.concurrency)
        start = time.monotonic()
        done = subprocess.run(
            [str(cli), "run", str(path), "--out", str(folder / "o"), "--no-report"],
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.monotonic() - start
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        expected = args.questions * args.seeds * 2
        distinct, dupes, errors = counts(folder / "o" / "runs.jsonl")
    print(
        f"{args.questions:,} questions x {args.seeds} seeds x 2 arms, concurrency "
        f"{args.concurrency}: exit {done.returncode}, {wall:.1f} s wall, driver peak "
        f"{peak_mb:,.0f} MB; {distinct:,} of {expected:,} runs recorded, {dupes} duplicated, "
        f"{errors} failed"
    )
    ok = done.returncode == 0 and distinct == expected and dupes == 0 and errors == 0
    if not ok:
        print(done.stderr[-3000:], file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
