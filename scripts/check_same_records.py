"""Do two checkouts of counterfact write the same records for the same sweep?

Runs one small sweep that makes every kind of record (``bench_runners.py:varied``: flips,
manifests, costs, a retried error, raised and contract errors, text UTF-8 cannot encode, a
``placebo: fresh`` arm) with each checkout (``PYTHONPATH``), from the CLI, on Ray and in-process,
and compares ``runs.jsonl`` (sorted by scenario, arm, seed), ``verdicts.jsonl`` and
``arms.jsonl``. Left out of the comparison: when a run finished and how long it took
(``finished_at``, ``duration_s``), the Ray node id (``node``), and the traceback of a failed run
(its frames name the checkout's own files and line numbers); the error's type and message are
compared.

    python scripts/check_same_records.py BEFORE_DIR AFTER_DIR

Exit 0 when everything compared is identical, 1 with the differences otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
VOLATILE = ("finished_at", "duration_s", "node")


def config(executor: str) -> str:
    return (
        "name: same\n"
        f"runner: {HERE / 'bench_runners.py'}:varied\n"
        "samples: 60\n"
        "scenarios: [{id: s1, reference: A}, {id: s2, reference: A}]\n"
        "comparator: {kind: exact}\n"
        "arms: [{id: base}, {id: flips, facets: {rate: 0.4}}, {id: same, facets: {rate: 0.0}},"
        " {id: aa, placebo: fresh}]\n"
        f"executor: {{kind: {executor}, retries: 1, retry_on: [ConnectionError]}}\n"
    )


def sweep(tree: Path, executor: str, out: Path) -> None:
    cfg = out.parent / f"{out.name}.yaml"
    cfg.write_text(config(executor), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [sys.executable, "-m", "counterfact.orchestrator.cli", "run", str(cfg), "--out"]
    done = subprocess.run([*cmd, str(out), "--no-report"], env=env, capture_output=True)
    if done.returncode not in (0, 1):  # 1: a verdict the sweep reports as a finding
        raise SystemExit(f"{tree} {executor}: exit {done.returncode}\n{done.stderr.decode()}")


def runs(out: Path) -> list[dict[str, Any]]:
    rows = []
    for line in (out / "runs.jsonl").read_text(encoding="utf-8").splitlines():
        row = {k: v for k, v in json.loads(line).items() if k not in VOLATILE}
        if row["error"] is not None:
            row["error"] = {**row["error"], "traceback": None}
        rows.append(row)
    return sorted(rows, key=lambda r: (r["scenario"], r["arm"], r["seed"]))


def kinds(rows: list[dict[str, Any]]) -> str:
    """What the records hold, so a reader sees the comparison covered each kind."""
    errors: dict[str, int] = {}
    for r in rows:
        if r["error"] is not None:
            errors[r["error"]["type"]] = errors.get(r["error"]["type"], 0) + 1
    retried = sum(r["attempts"] > 1 for r in rows)
    escaped = sum(r["text_escaped"] for r in rows)
    fresh = sum(r["runner_seed"] is not None for r in rows)
    return f"errors {errors}, retried {retried}, text escaped {escaped}, fresh-placebo {fresh}"


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def compare(before: Path, after: Path) -> list[str]:
    problems = []
    a, b = runs(before), runs(after)
    if a != b:
        diff = [f"  {x}\n  {y}" for x, y in zip(a, b, strict=False) if x != y][:5]
        problems.append(f"runs.jsonl differs ({len(a)} vs {len(b)} records):\n" + "\n".join(diff))
    for name in ("verdicts.jsonl", "arms.jsonl"):
        if lines(before / name) != lines(after / name):
            problems.append(f"{name} differs:\n" + "\n".join(fields(before / name, after / name)))
    return problems


def fields(before: Path, after: Path, shown: int = 5) -> list[str]:
    """The first ``shown`` fields that differ between two JSONL files, line by line."""
    out = [f"  {len(lines(before))} vs {len(lines(after))} lines"]
    for i, (x, y) in enumerate(zip(lines(before), lines(after), strict=False)):
        old, new = json.loads(x), json.loads(y)
        for key in sorted(set(old) | set(new)):
            if old.get(key) != new.get(key) and len(out) <= shown:
                out.append(f"  line {i + 1} {key}: {old.get(key)!r:.160} -> {new.get(key)!r:.160}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args()
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for executor in ("ray", "local"):
            outs = []
            for label, tree in (("before", args.before), ("after", args.after)):
                out = Path(tmp) / f"{label}-{executor}"
                sweep(tree.resolve(), executor, out)
                outs.append(out)
            problems = compare(*outs)
            rows = runs(outs[0])
            state = "identical" if not problems else "DIFFERENT"
            print(f"{executor}: {len(rows)} records ({kinds(rows)}); records and verdicts {state}")
            for p in problems:
                print(p)
            failed = failed or bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
