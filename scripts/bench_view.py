"""``counterfact view`` on an eval-set run directory: each page's latency and the server's memory.

A real sweep (the engine, in-process executor) of ``--questions`` questions (10,000) x 4 arms x
``--seeds`` seeds (5) writes a run directory (``evalset``: 200,000 runs, and the real
``verdicts.jsonl``, ``summary.json`` and ``arms.jsonl`` of judging them). Beside it, ``running``
holds the same ``runs.jsonl`` and nothing else (a sweep at work: its pages list the runs), and
``copy-N`` hard links of ``evalset`` for the eviction check. The real command,
``python -m counterfact.orchestrator.cli view FOLDER --port 0`` (what ``counterfact view``
runs), serves them in a subprocess; one kept-alive httpx client, as a browser keeps its
connection, asks:

- the first page (``/``) and the sweep page cold, the first requests after start (target ≤ 1 s);
- once the indexes are complete, an arm's question list (first page, a later page, filtered)
  and several questions' outputs side by side, each asked ``--repeat`` times (target ≤ 0.3 s);
- the server's peak RSS from /proc (``VmHWM``) after the index, and after browsing every
  ``copy-N`` one after another (each indexed whole): the eviction policy must hold the peak
  near the bound, not grow with the directories browsed;
- the runs index alone, built in this process under ``tracemalloc``: what it holds once built
  (bytes a run) and its peak while the one streamed pass reads the file, beside the estimate
  the catalog evicts by.

    python scripts/bench_view.py                          # recorded in docs/benchmarks.md
    python scripts/bench_view.py --questions 2500 --copies 0 --no-record
    python scripts/bench_view.py --lines 1000000 --copies 0   # running/ grown to 10^6 lines
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from benchlog import record

from counterfact import RunContext, compare_arms

ARMS = ["baseline", "alt", "other", "fourth"]


def _runner(ctx: RunContext) -> dict[str, object]:
    """Arm 'alt' flips on a quarter of the questions (even seeds), 'other' on one in fifty."""
    q = int(ctx.scenario.id[1:])
    flips = (ctx.arm.id == "alt" and q % 4 == 0 and ctx.seed % 2 == 0) or (
        ctx.arm.id == "other" and q % 50 == 0
    )
    return {"output": "no" if flips else "yes", "cost": {"tokens": 12}}


def build(out: Path, questions: int, seeds: int) -> None:
    """A real sweep into ``out``: every record file as the engine writes it."""
    compare_arms(
        [{"id": a, "facets": {"model": a}} for a in ARMS],
        _runner,
        samples=seeds,
        scenarios=[{"id": f"q{i}", "inputs": {}, "reference": "yes"} for i in range(questions)],
        comparator="exact",
        executor="local",
        name="bench-view",
        out=out,
    )


def _rss_mib(pid: int, key: str = "VmHWM") -> float:
    status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    line = next(s for s in status.splitlines() if s.startswith(f"{key}:"))
    return int(line.split()[1]) / 1024


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.2f}/{five:.2f}"


def _get(client: httpx.Client, path: str, **params: str) -> tuple[float, httpx.Response]:
    start = time.perf_counter()
    reply = client.get(path, params=params)
    return time.perf_counter() - start, reply


def _indexed(client: httpx.Client, run: str) -> float:
    """Seconds until ``run``'s pages no longer say they are indexing."""
    start = time.perf_counter()
    while "reload for the rest" in client.get("/sweep", params={"run": run}).text:
        time.sleep(0.2)
    return time.perf_counter() - start


@contextmanager
def served(folder: Path) -> Iterator[tuple[httpx.Client, int]]:
    """The real command serving ``folder``, and a kept-alive client of it."""
    cmd = [sys.executable, "-m", "counterfact.orchestrator.cli", "view", str(folder)]
    proc = subprocess.Popen([*cmd, "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split(" at ")[1].split()[0]
        with httpx.Client(base_url=url, timeout=600) as client:
            yield client, proc.pid
    finally:
        proc.send_signal(signal.SIGINT)  # only the server this script started
        proc.wait(timeout=30)


def index_memory(runs: Path) -> str:
    """The runs index of ``runs`` built here under ``tracemalloc``: held and peak memory."""
    from counterfact.orchestrator.view.index import RunsIndex

    tracemalloc.start()
    try:
        index = RunsIndex(runs)
        index.refresh()
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    cells = sum(map(len, index.cells.values()))
    return (
        f"- runs index of {index.held:,} runs ({cells:,} arm-questions), built alone under "
        f"tracemalloc: holds {held / 2**20:.1f} MiB ({held / max(1, index.held):.0f} bytes a "
        f"run), peak {peak / 2**20:.1f} MiB during the pass; the catalog estimates "
        f"{index.footprint() / 2**20:.1f} MiB ({_load()})"
    )


def _row(name: str, times: list[float], reply: httpx.Response, target: float) -> str:
    worst = max(times)
    met = "met" if worst <= target else "**missed**"
    spread = f"median {statistics.median(times):.3f} s, max {worst:.3f} s over {len(times)}"
    return (
        f"- `{name}`: HTTP {reply.status_code}, {len(reply.content):,} bytes; {spread} "
        f"(target ≤ {target} s: {met}; {_load()})"
    )


def _cold(client: httpx.Client) -> list[str]:
    """The first page and the sweep page, each the first request of its kind after start."""
    rows = []
    for path, params in (("/", {}), ("/sweep", {"run": "evalset"})):
        took, reply = _get(client, path, **params)
        shown = f"{path}?{httpx.QueryParams(params)}" if params else path
        rows.append(_row(shown + " (cold)", [took], reply, 1.0))
    took, reply = _get(client, "/sweep", run="running")
    rows.append(_row("/sweep?run=running (cold, runs.jsonl only)", [took], reply, 1.0))
    return rows


def _warm(client: httpx.Client, repeat: int, questions: int) -> list[str]:
    """Each page ``repeat`` times once the indexes are complete."""
    pages = [
        ("/arm", {"run": "evalset", "arm": "alt"}),
        ("/arm", {"run": "evalset", "arm": "alt", "page": str(max(1, questions // 200))}),
        ("/arm", {"run": "evalset", "arm": "alt", "verdict": "confirmed"}),
        ("/arm", {"run": "running", "arm": "alt"}),
        ("/sweep", {"run": "evalset"}),
    ]
    asked = [f"q{i * questions // 5 + 7}" for i in range(5)]
    rows = []
    for path, params in pages:
        replies = [_get(client, path, **params) for _ in range(repeat)]
        name = f"{path}?{httpx.QueryParams(params)}"
        rows.append(_row(name, [t for t, _ in replies], replies[-1][1], 0.3))
    for run in ("evalset", "running"):
        replies = [
            _get(client, "/question", run=run, arm="alt", q=q) for q in asked for _ in range(repeat)
        ]
        name = f"/question?run={run}&arm=alt&q=… ({len(asked)} questions)"
        rows.append(_row(name, [t for t, _ in replies], replies[-1][1], 0.3))
    replies = [_get(client, "/output", run="evalset", arm="alt", q=q, seed="3") for q in asked]
    rows.append(
        _row("/output?run=evalset&arm=alt&q=…&seed=3", [t for t, _ in replies], replies[-1][1], 0.3)
    )
    return rows


def _browse_copies(client: httpx.Client, pid: int, copies: int) -> list[str]:
    """Each copy indexed whole, one after another; the peak RSS after each."""
    peaks = []
    for n in range(copies):
        run = f"copy-{n}"
        client.get("/sweep", params={"run": run})
        _indexed(client, run)
        client.get("/arm", params={"run": run, "arm": "alt"})
        peaks.append(_rss_mib(pid))
    shown = ", ".join(f"{p:,.0f}" for p in peaks)
    return [
        f"- browsing {copies} more copies of it, each indexed whole: peak RSS after each "
        f"{shown} MiB ({_load()})"
    ]


def measure(folder: Path, repeat: int, questions: int, copies: int) -> list[str]:
    with served(folder) as (client, pid):
        rows = [f"- server RSS before the first request {_rss_mib(pid, 'VmRSS'):,.0f} MiB"]
        rows += _cold(client)
        waited = max(_indexed(client, "evalset"), _indexed(client, "running"))
        rows.append(
            f"- both indexes complete {waited:.1f} s after the pages above; server peak RSS "
            f"{_rss_mib(pid):,.0f} MiB, now {_rss_mib(pid, 'VmRSS'):,.0f} MiB ({_load()})"
        )
        print(*rows, sep="\n", flush=True)
        more = _warm(client, repeat, questions)
        if copies:
            more += _browse_copies(client, pid, copies)
        print(*more, sep="\n", flush=True)
    return rows + more


def grow(source: Path, out: Path, lines: int) -> str:
    """``out``: ``source``'s lines, then copies of them under new seeds up to ``lines`` lines
    (each as large as a real one).
    """
    first = source.read_bytes().splitlines()
    with out.open("w", encoding="utf-8") as fh:
        for n in range(lines):
            copy, index = divmod(n, len(first))
            line = json.loads(first[index])
            line["seed"] += copy * 1_000_000  # copy 0 is the real line
            fh.write(json.dumps(line, separators=(",", ":")) + "\n")
    return f"; running/runs.jsonl grown to {lines:,} lines, {out.stat().st_size / 2**20:,.0f} MiB"


def _prepare(folder: Path, questions: int, seeds: int, copies: int, grow_to: int) -> str:
    start = time.perf_counter()
    build(folder / "evalset", questions, seeds)
    built = time.perf_counter() - start
    (folder / "running").mkdir()
    grown = ""
    if grow_to:
        grown = grow(folder / "evalset" / "runs.jsonl", folder / "running" / "runs.jsonl", grow_to)
    else:
        os.link(folder / "evalset" / "runs.jsonl", folder / "running" / "runs.jsonl")
    for n in range(copies):
        (folder / f"copy-{n}").mkdir()
        for name in ("runs.jsonl", "verdicts.jsonl", "summary.json", "arms.jsonl", "sweep.json"):
            os.link(folder / "evalset" / name, folder / f"copy-{n}" / name)
    evalset = folder / "evalset"
    lines = sum(1 for _ in (evalset / "runs.jsonl").open("rb"))
    sizes = ", ".join(
        f"{name} {os.path.getsize(evalset / name) / 2**20:,.1f} MiB"
        for name in ("runs.jsonl", "verdicts.jsonl", "summary.json")
    )
    return (
        f"- run directory: {questions:,} questions x {len(ARMS)} arms x {seeds} seeds = "
        f"{lines:,} runs through the engine in {built:.0f} s; {sizes}{grown}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--copies", type=int, default=10, help="run directories browsed after")
    parser.add_argument(
        "--lines", type=int, default=0, help="grow running/runs.jsonl to this many lines"
    )
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "served"
        head = _prepare(folder, args.questions, args.seeds, args.copies, args.lines)
        print(head, flush=True)
        rows = [head, *measure(folder, args.repeat, args.questions, args.copies)]
        rows.append(index_memory(folder / "evalset" / "runs.jsonl"))
        print(rows[-1], flush=True)
    if not args.no_record:
        record("bench_view", rows)


if __name__ == "__main__":
    main()
