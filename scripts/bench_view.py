"""``counterfact view`` on a large run directory: each page's time and size over HTTP.

A real sweep (in-process executor, 4 arms, 100 questions, 3 seeds) writes a run directory
(``finished``); its ``runs.jsonl`` lines are then copied under new seeds up to ``--lines``
lines (each copied line is as large as a real one). Beside it, ``running`` holds the same
``runs.jsonl`` and nothing else (a sweep at work: the list names its arms from the runs). The
real command, ``counterfact view FOLDER --port 0``, serves both in a subprocess; httpx asks
for each page twice (cold: the first request after start, then again), waits until the
indexes are complete, asks once more, and reads the server's peak RSS from /proc. Target
(issue 45): the first page well under 2 s and under ~1 MB at 10^6 lines.

    python scripts/bench_view.py                      # 10^6 lines, recorded in benchmarks.md
    python scripts/bench_view.py --lines 100000 --no-record
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from benchlog import record

from counterfact import RunContext, compare_arms

ARMS = ["baseline", "alt", "other", "fourth"]
QUESTIONS = 100


def _runner(ctx: RunContext) -> dict[str, object]:
    word = "no" if ctx.arm.id == "alt" and ctx.seed % 3 == 0 else "yes"
    return {"output": f"The answer is {word}, as the passage says.", "cost": {"tokens": 12}}


def build(out: Path, lines: int) -> None:
    """A real sweep into ``out``, then its runs.jsonl grown to ``lines`` lines."""
    compare_arms(
        [{"id": a, "facets": {"model": a}} for a in ARMS],
        _runner,
        samples=3,
        scenarios=[{"id": f"q{i}", "inputs": {}, "reference": "yes"} for i in range(QUESTIONS)],
        comparator="exact",
        executor="local",
        name="bench-view",
        out=out,
    )
    template = json.loads((out / "runs.jsonl").read_text(encoding="utf-8").splitlines()[0])
    per_question = lines // (QUESTIONS * len(ARMS))
    with (out / "runs.jsonl").open("w", encoding="utf-8") as fh:
        for seed in range(per_question):
            for q in range(QUESTIONS):
                for arm in ARMS:
                    line = template | {"scenario": f"q{q}", "arm": arm, "seed": seed}
                    fh.write(json.dumps(line, separators=(",", ":")) + "\n")


def _peak_rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    line = next(s for s in status.splitlines() if s.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


PAGES = [
    ("/", {}),
    ("/sweep", {"run": "finished"}),
    ("/arm", {"run": "finished", "arm": "alt"}),
    ("/question", {"run": "finished", "arm": "alt", "q": "q7"}),
    ("/output", {"run": "finished", "arm": "alt", "q": "q7", "seed": "5"}),
    ("/sweep", {"run": "running"}),
    ("/arm", {"run": "running", "arm": "alt"}),
]


def _time(client: httpx.Client, path: str, params: dict[str, str]) -> tuple[float, httpx.Response]:
    start = time.perf_counter()
    reply = client.get(path, params=params)
    return time.perf_counter() - start, reply


def _indexed(client: httpx.Client) -> float:
    """Seconds until both directories' pages no longer say they are indexing."""
    start = time.perf_counter()
    while any(
        "reload for the rest" in client.get("/sweep", params={"run": run}).text
        for run in ("finished", "running")
    ):
        time.sleep(0.5)
    return time.perf_counter() - start


def measure(folder: Path) -> list[str]:
    """Each page cold then warm, then once more after the indexes are complete, on the real
    command in a subprocess.
    """
    cmd = [sys.executable, "-m", "counterfact.orchestrator.cli", "view", str(folder)]
    proc = subprocess.Popen([*cmd, "--port", "0"], stdout=subprocess.PIPE, text=True)
    rows = []
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split(" at ")[1].split()[0]
        with httpx.Client(base_url=url, timeout=600) as client:
            replies = {}
            for path, params in PAGES:
                cold, _ = _time(client, path, params)
                warm, reply = _time(client, path, params)
                replies[(path, str(params))] = (cold, warm)
            waited = _indexed(client)
            for path, params in PAGES:
                cold, warm = replies[(path, str(params))]
                done, reply = _time(client, path, params)
                shown = f"{path}?{httpx.QueryParams(params)}" if params else path
                rows.append(
                    f"- `{shown}`: HTTP {reply.status_code}, {len(reply.content):,} bytes; "
                    f"cold {cold:.2f} s, again {warm:.2f} s, indexed {done:.2f} s"
                )
                print(rows[-1], flush=True)
            rows.append(f"- both indexes complete {waited:.1f} s after the pages above")
        rows.append(f"- server peak RSS {_peak_rss_mib(proc.pid):,.0f} MiB")
        print(*rows[-2:], sep="\n", flush=True)
    finally:
        proc.send_signal(signal.SIGINT)  # only the server this script started
        proc.wait(timeout=30)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "served"
        start = time.perf_counter()
        build(folder / "finished", args.lines)
        (folder / "running").mkdir()
        os.link(folder / "finished" / "runs.jsonl", folder / "running" / "runs.jsonl")
        size = os.path.getsize(folder / "finished" / "runs.jsonl")
        head = (
            f"- runs.jsonl: {args.lines:,} lines, {size / 2**20:,.0f} MiB "
            f"(built in {time.perf_counter() - start:.0f} s)"
        )
        print(head, flush=True)
        rows = [head, *measure(folder)]
    if not args.no_record:
        record("bench_view", rows)


if __name__ == "__main__":
    main()
