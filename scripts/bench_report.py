"""report.html on eval sets: its size and build time at 334 questions, and at 10,000 questions x
4 arms and x 10 arms, against the budget (30 s at 10,000 x 4 x 5 seeds; 10 MB at 10,000 x 10).

1. A real sweep of 334 questions x (baseline + 2 challengers) = 1,002 rows on the in-process
   executor (4 samples, an answer-level comparator, runs reporting a cost), then
   ``write_report``; beside it the per-question design it replaced, one figure per challenger
   row, drawn for the same rows, so the ratio is measured in one run.
2. 10,000 questions: a real sweep of ``--seed-questions`` questions (5 seeds, an instant
   runner), its records copied under new question ids up to ``--questions`` (the sweep itself
   takes minutes at 10,000 questions; the report reads only the records, and each copied row is
   as large as a real one), then ``write_report`` on the copy, timed.

    python scripts/bench_report.py
    python scripts/bench_report.py --questions 10000 --no-record
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from benchlog import record

from counterfact import RunContext, compare_arms
from counterfact.orchestrator.drivers.outputs.report import report_data, write_report
from counterfact.verdicts.report.plots import scenario_figure
from counterfact.verdicts.report.scenario import _series

TIME_BUDGET_S = 30.0
"""The report of 10,000 questions x 4 arms x 5 seeds, built within this."""
SIZE_BUDGET_MB = 10.0
"""The report of 10,000 questions x 10 arms, at most this large."""


def _runner(ctx: RunContext) -> dict[str, object]:
    rate = 0.1 if ctx.arm.id == "base" else 0.1 + 0.03 * int(ctx.arm.id[1:])
    draw = random.Random(f"{ctx.scenario.id}/{ctx.arm.id}/{ctx.seed}").random()
    return {"output": "wrong" if draw < rate else "right", "cost": {"usd": 1e-3, "tokens": 120}}


def _sweep(out: Path, questions: int, arms: int, samples: int) -> None:
    compare_arms(
        [{"id": "base"}] + [{"id": f"c{i}", "facets": {"x": i}} for i in range(1, arms)],
        _runner,
        samples=samples,
        scenarios=[
            {"id": f"q{i}", "inputs": {"q": f"question {i}"}, "reference": "right"}
            for i in range(questions)
        ],
        comparator="contains",
        executor="local",
        out=out,
        runner_version="bench",
    )


def _copy_lines(source: Path, target: Path, real: int, copies: int) -> None:
    """Each line once per copy, its ``scenario`` renamed ``q<i>`` -> ``q<copy * real + i>``."""
    lines = source.read_text(encoding="utf-8").splitlines()
    with target.open("w", encoding="utf-8") as fh:
        for copy in range(copies):
            for line in lines:
                head = line.index('"scenario":"q') + len('"scenario":"q')
                end = line.index('"', head)
                i = int(line[head:end]) + copy * real
                fh.write(f"{line[:head]}{i}{line[end:]}\n")


def _scaled(real_dir: Path, out: Path, real: int, questions: int) -> None:
    """``real_dir``'s records as a sweep of ``questions`` questions (a multiple of ``real``)."""
    copies = questions // real
    out.mkdir()
    for name in ("verdicts.jsonl", "runs.jsonl"):
        _copy_lines(real_dir / name, out / name, real, copies)
    (out / "arms.jsonl").write_bytes((real_dir / "arms.jsonl").read_bytes())
    summary = json.loads((real_dir / "summary.json").read_text(encoding="utf-8"))
    summary["scenarios"] = [
        s | {"id": f"q{copy * real + int(s['id'][1:])}"}
        for copy in range(copies)
        for s in summary["scenarios"]
    ]
    (out / "summary.json").write_text(json.dumps(summary), encoding="utf-8")


def _built(run_dir: Path) -> tuple[float, float, str]:
    t0 = time.perf_counter()
    page = write_report(run_dir)
    seconds = time.perf_counter() - t0
    text = page.read_text(encoding="utf-8")
    return seconds, page.stat().st_size / 1e6, text


def _small(tmp: Path, scenarios: int) -> list[str]:
    out = tmp / "small"
    _sweep(out, scenarios, 3, 4)
    build, size, text = _built(out)
    data = report_data(out)
    base = {r.scenario: r for r in data.rows if r.is_baseline}
    challengers = [r for r in data.rows if not r.is_baseline]
    t0 = time.perf_counter()
    old = sum(
        len(scenario_figure([_series(base[r.scenario]), _series(r)], None, r.arm, True))
        for r in challengers
    )
    old_s = time.perf_counter() - t0
    figures = text.count("<svg")
    return [
        f"- {len(data.rows)} verdict rows ({scenarios} questions): report.html {size:.2f} MB, "
        f"built in {build:.1f} s; {figures} figures (the forest plot and the notable "
        "questions), every row in the inline table",
        f"- the per-row design for the same {len(challengers)} rows: figures alone "
        f"{old / 1e6:.2f} MB in {old_s:.1f} s",
    ]


def _large(tmp: Path, real: int, questions: int, arms: int) -> tuple[str, float, float]:
    real_dir = tmp / f"real-{arms}"
    t0 = time.perf_counter()
    _sweep(real_dir, real, arms, 5)
    swept = time.perf_counter() - t0
    out = tmp / f"scaled-{arms}"
    _scaled(real_dir, out, real, questions)
    build, size, text = _built(out)
    with (out / "verdicts.jsonl").open(encoding="utf-8") as fh:
        rows = sum(1 for _ in fh)
    line = (
        f"- {questions:,} questions x {arms} arms x 5 seeds ({rows:,} rows; records copied from "
        f"a real {real}-question sweep, {swept:.0f} s): report.html {size:.2f} MB, built in "
        f"{build:.1f} s; {text.count('<svg')} figures"
    )
    return line, build, size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=334)
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--seed-questions", type=int, default=200)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    if args.questions % args.seed_questions:
        parser.error("--questions must be a multiple of --seed-questions")
    with tempfile.TemporaryDirectory() as tmp:
        lines = _small(Path(tmp), args.scenarios)
        four, build, _ = _large(Path(tmp), args.seed_questions, args.questions, 4)
        ten, _, size = _large(Path(tmp), args.seed_questions, args.questions, 10)
    at_scale = args.questions >= 10_000
    ok = not at_scale or (build <= TIME_BUDGET_S and size <= SIZE_BUDGET_MB)
    lines += [
        four,
        ten,
        f"- budget ({TIME_BUDGET_S:.0f} s at 4 arms, {SIZE_BUDGET_MB:.0f} MB at 10 arms): "
        + ("met" if ok else "NOT met"),
    ]
    print("\n".join(lines))
    if not args.no_record:
        record("bench_report", lines)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
