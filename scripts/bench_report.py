"""report.html at 1,000 verdict rows: its size and build time, against the per-row page it
replaced.

A sweep of 334 scenarios x (baseline + 2 challengers) = 1,002 rows on the in-process executor
(4 samples, an answer-level comparator), then ``write_report`` on its run directory. The peer
doing the same work is the old design, one figure per challenger row (two series each): drawn
here for the same 668 rows, so the ratio of figure bytes and drawing time is measured in one
run. Target: the whole page under a few MB, with no row left out.

    python scripts/bench_report.py
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

from benchlog import record

from counterfact import RunContext, compare_arms
from counterfact.orchestrator.drivers.report import report_data, write_report
from counterfact.verdicts.html_scenario import _series
from counterfact.verdicts.plots import scenario_figure


def _runner(ctx: RunContext) -> str:
    rate = {"base": 0.1, "a": 0.4, "b": 0.1}[ctx.arm.id]
    draw = random.Random(f"{ctx.scenario.id}/{ctx.arm.id}/{ctx.seed}").random()
    return "no" if draw < rate else "yes"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=334)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        arms = [{"id": "base"}, {"id": "a", "facets": {"x": 1}}, {"id": "b", "facets": {"x": 2}}]
        scenarios = [
            {"id": f"s{i}", "inputs": {"q": f"question {i}"}, "reference": "yes"}
            for i in range(args.scenarios)
        ]
        compare_arms(
            arms,
            _runner,
            samples=4,
            scenarios=scenarios,
            comparator="contains",
            executor="local",
            out=out,
            runner_version="bench",
        )
        t0 = time.perf_counter()
        page = write_report(out)
        build = time.perf_counter() - t0
        size = page.stat().st_size
        text = page.read_text(encoding="utf-8")
        data = report_data(out)
        base = {r.scenario: r for r in data.rows if r.is_baseline}
        t0 = time.perf_counter()
        old = sum(
            len(scenario_figure([_series(base[r.scenario]), _series(r)], None, r.arm, True))
            for r in data.rows
            if not r.is_baseline
        )
        old_s = time.perf_counter() - t0
    rows = len(data.rows)
    sections = text.count('<section class="arm"')
    figures = text.count('<figure class="scenario"')
    lines = [
        f"- {rows} verdict rows ({args.scenarios} scenarios): report.html {size / 1e6:.2f} MB, "
        f"built in {build:.1f} s; {sections} challenger sections, {figures} scenario figures "
        "(no row left out)",
        f"- the per-row design for the same {sections} rows: figures alone {old / 1e6:.2f} MB in "
        f"{old_s:.1f} s; the whole new page is {size / old:.2f}x its figure bytes",
    ]
    print("\n".join(lines))
    if not args.no_record:
        record("bench_report", lines)
    return 0 if sections == rows - args.scenarios else 1


if __name__ == "__main__":
    sys.exit(main())
