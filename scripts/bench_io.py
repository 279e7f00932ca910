"""API-bound runs, side by side in one run: counterfact (async and threaded, on Ray and in-process)
against 100 plain threads with httpx and Inspect AI, on a loopback stand-in for a
chat-completions API (lognormal latency, median 1 s, p95 3 s). Every system sends the same
requests ``q0 .. q<n-1>``, so each gets the same latencies (the stand-in seeds a request's wait
by its messages).

Each system runs as its own process; its wall time and the peak RSS of its whole process tree
(Ray's workers included) are measured from outside. "Marginal" is the wall time of the larger
size minus the smaller one's, which takes start-up out.

    python scripts/bench_io.py                     # everything (about 10 minutes)
    python scripts/bench_io.py --part io --part limit

Parts: ``io`` (concurrency 100), ``limit`` (a server that allows 20 in flight, 429 +
Retry-After: 1 beyond), ``weather`` (3% of requests refused at random, 429 + Retry-After: 1, at
concurrency 25, beside a bare asyncio loop honouring Retry-After), ``outage`` (every request
refused for ``--outage-s`` after 10 s at concurrency 50: how soon the sweep is back in
flight), ``max`` (1,000 runs in flight), ``cpu`` (the CPU-bound paths from the CLI on a fresh
local Ray instance). Needs the dev and bench extras (starlette, uvicorn, httpx,
inspect-ai).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
RUNNER = ROOT / "scripts" / "bench_io_runner.py"
INSPECT_TASK = ROOT / "scripts" / "bench_io_inspect.py"
BIN = Path(sys.executable).parent


@dataclass
class Measured:
    wall_s: float
    peak_rss_mb: float
    failed: int
    served_latency_s: float
    refused: int
    peak_in_flight: int
    after_outage: list[tuple[float, int]] = field(default_factory=list)
    concurrency: dict[str, object] | None = None


class TreeRss:
    """Polls the RSS of a process and all its descendants; keeps the peak."""

    def __init__(self, pid: int) -> None:
        self.root = psutil.Process(pid)
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.is_set():
            total = 0
            try:
                procs = [self.root, *self.root.children(recursive=True)]
            except psutil.Error:
                procs = []
            for p in procs:
                with suppress(psutil.Error):
                    total += p.memory_info().rss
            self.peak = max(self.peak, total)
            self._stop.wait(0.1)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak / 2**20


@contextmanager
def stand_in(
    max_in_flight: int | None = None,
    refuse_rate: float = 0.0,
    outage: tuple[float, float] | None = None,
) -> Iterator[str]:
    """The stand-in API in its own process; yields its base URL."""
    cmd = [sys.executable, "-m", "tests.standin", "--median-s", "1", "--p95-s", "3"]
    cmd += ["--retry-after", "1", "--refuse-rate", str(refuse_rate)]
    if max_in_flight is not None:
        cmd += ["--max-in-flight", str(max_in_flight)]
    if outage is not None:
        cmd += ["--outage", str(outage[0]), str(outage[1])]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _stats(url: str, *, reset: bool = False) -> dict[str, Any]:
    base = url.removesuffix("/v1")
    if reset:
        httpx.delete(f"{base}/stats")
        return {}
    data: dict[str, Any] = httpx.get(f"{base}/stats").json()
    return data


def _measure(cmd: list[str], url: str, env: dict[str, str], cwd: Path) -> tuple[float, float]:
    _stats(url, reset=True)
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    rss = TreeRss(proc.pid)
    _, err = proc.communicate()
    wall = time.perf_counter() - started
    peak = rss.stop()
    if proc.returncode not in (0, 4):
        raise SystemExit(f"{' '.join(cmd[:4])} failed ({proc.returncode}): {err.decode()[-2000:]}")
    return wall, peak


def counterfact(url: str, n: int, runner: str, executor: str, concurrency: int) -> Measured:
    """``counterfact run`` from the CLI: two arms, ``n / 2`` seeds each."""
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "sweep.yaml"
        cfg.write_text(
            f"name: io\nrunner: {RUNNER}:{runner}\nsamples: {n // 2}\nreference: Paris\n"
            "comparator: {kind: contains}\narms: [{id: a}, {id: b, facets: {x: 1}}]\n"
            f"executor: {{kind: {executor}, concurrency: {concurrency}}}\n"
        )
        env = {**os.environ, "BENCH_BASE_URL": url}
        cmd = [str(BIN / "counterfact"), "run", str(cfg), "--out", f"{tmp}/o", "--no-report"]
        wall, peak = _measure(cmd, url, env, Path(tmp))
        runs = [json.loads(x) for x in (Path(tmp) / "o" / "runs.jsonl").read_text().splitlines()]
        summary = json.loads((Path(tmp) / "o" / "summary.json").read_text())
    failed = sum(r["error"] is not None for r in runs) + (n - len(runs))
    measured = _done(url, wall, peak, failed)
    measured.concurrency = (summary.get("execution") or summary).get("concurrency")
    return measured


def _done(url: str, wall: float, peak: float, failed: int) -> Measured:
    s = _stats(url)
    return Measured(
        wall,
        peak,
        failed,
        s["served_latency_s"],
        int(s["refused"]),
        int(s["peak_in_flight"]),
        [(float(t), int(k)) for t, k in s.get("after_outage", [])],
    )


def threads(url: str, n: int, concurrency: int) -> Measured:
    """The peer: plain threads posting with httpx (this script, as a subprocess)."""
    cmd = [sys.executable, __file__, "--peer-threads", str(n), str(concurrency)]
    wall, peak = _measure(cmd, url, {**os.environ, "BENCH_BASE_URL": url}, ROOT)
    return _done(url, wall, peak, 0)


def _peer_threads(n: int, concurrency: int) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    from bench_io_runner import LIMITS, body

    url = os.environ["BENCH_BASE_URL"] + "/chat/completions"
    local = threading.local()  # one client per thread: a shared one breaks at ~1,000 threads

    def one(i: int) -> None:
        if not hasattr(local, "client"):
            local.client = httpx.Client(limits=LIMITS, timeout=120)
        local.client.post(url, json=body(i)).raise_for_status()

    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, range(n)))


def bare_asyncio(url: str, n: int, concurrency: int) -> Measured:
    """The peer for refusals: a bare asyncio loop, a semaphore of ``concurrency``, httpx; a 429
    gives its slot back, sleeps ``Retry-After`` and sends again (this script, as a subprocess).
    """
    cmd = [sys.executable, __file__, "--peer-asyncio", str(n), str(concurrency)]
    wall, peak = _measure(cmd, url, {**os.environ, "BENCH_BASE_URL": url}, ROOT)
    return _done(url, wall, peak, 0)


def _peer_asyncio(n: int, concurrency: int) -> None:
    import asyncio

    sys.path.insert(0, str(ROOT / "scripts"))
    from bench_io_runner import LIMITS, body

    url = os.environ["BENCH_BASE_URL"] + "/chat/completions"

    async def main() -> None:
        slots = asyncio.Semaphore(concurrency)
        async with httpx.AsyncClient(limits=LIMITS, timeout=120) as client:

            async def one(i: int) -> None:
                while True:
                    async with slots:
                        response = await client.post(url, json=body(i))
                    if response.status_code != 429:
                        response.raise_for_status()
                        return
                    await asyncio.sleep(float(response.headers.get("retry-after", "1")))

            await asyncio.gather(*(one(i) for i in range(n)))

    asyncio.run(main())


def inspect_ai(url: str, n: int, concurrency: int) -> Measured:
    """Inspect AI with ``--max-connections``, its OpenAI provider on chat completions."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            str(BIN / "inspect"), "eval", f"{INSPECT_TASK}@standin", "-T", f"n={n}",
            "--model", "openai/bench", "-M", "responses_api=false",
            "--max-connections", str(concurrency), "--log-dir", tmp, "--display", "none",
        ]  # fmt: skip
        env = {**os.environ, "OPENAI_BASE_URL": url, "OPENAI_API_KEY": "bench"}
        wall, peak = _measure(cmd, url, env, Path(tmp))
    return _done(url, wall, peak, 0)


def _row(name: str, small: Measured, big: Measured, peer: float | None) -> str:
    marginal = big.wall_s - small.wall_s
    ratio = f"{marginal / peer:.2f}x" if peer else "1.00x"
    return (
        f"| {name} | {small.wall_s:.1f} | {big.wall_s:.1f} | {marginal:.1f} | {ratio} | "
        f"{big.peak_rss_mb:.0f} | {big.peak_in_flight} | {small.failed + big.failed} | "
        f"{big.served_latency_s:.0f} |"
    )


def part_io(sizes: tuple[int, int], concurrency: int = 100) -> None:
    print(f"\n## concurrency {concurrency}: {sizes[0]} and {sizes[1]} requests\n")
    print(
        "| system | wall small (s) | wall big (s) | marginal (s) | vs threads | peak RSS (MB) "
        "| peak in flight | failed | served latency big (s) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    systems = {
        "100 plain threads + httpx": lambda u, n: threads(u, n, concurrency),
        "counterfact async, ray": lambda u, n: counterfact(u, n, "ask", "ray", concurrency),
        "counterfact threaded, ray": lambda u, n: counterfact(u, n, "ask_sync", "ray", concurrency),
        "counterfact async, local": lambda u, n: counterfact(u, n, "ask", "local", concurrency),
        "counterfact threaded, local": lambda u, n: counterfact(
            u, n, "ask_sync", "local", concurrency
        ),
        "Inspect AI": lambda u, n: inspect_ai(u, n, concurrency),
    }
    peer: float | None = None
    with stand_in() as url:
        for name, fn in systems.items():
            small, big = fn(url, sizes[0]), fn(url, sizes[1])
            print(_row(name, small, big, peer), flush=True)
            if peer is None:
                peer = big.wall_s - small.wall_s


def part_limit(n: int) -> None:
    print(f"\n## a server that allows 20 in flight (429 + Retry-After: 1 beyond), {n} runs\n")
    print(
        "| system | wall (s) | served latency / 20 (s) | ratio | failed | 429s | 429s per run "
        "| cuts in the first 5 s | peak RSS (MB) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    with stand_in(max_in_flight=20) as url:
        for executor in ("ray", "local"):
            m = counterfact(url, n, "ask", executor, 100)
            ideal = m.served_latency_s / 20
            print(
                f"| counterfact async, {executor}, concurrency 100 | {m.wall_s:.1f} | "
                f"{ideal:.1f} | {m.wall_s / ideal:.2f}x | {m.failed} | {m.refused} | "
                f"{m.refused / n:.3f} | {_early_refusals(m.concurrency)} | {m.peak_rss_mb:.0f} |",
                flush=True,
            )


def part_weather(n: int, concurrency: int = 25, rate: float = 0.03) -> None:
    print(
        f"\n## {rate:.0%} of requests refused at random (429 + Retry-After: 1), "
        f"concurrency {concurrency}, {n} runs\n"
    )
    print(
        "| system | wall (s) | vs bare asyncio | failed | 429s | cuts | lowest limit "
        "| peak in flight |"
    )
    print("|---|---|---|---|---|---|---|---|")
    peer: float | None = None
    with stand_in(refuse_rate=rate) as url:
        for name, fn in {
            "bare asyncio loop + httpx, honours Retry-After": lambda: bare_asyncio(
                url, n, concurrency
            ),
            "counterfact async, local": lambda: counterfact(url, n, "ask", "local", concurrency),
            "counterfact async, ray": lambda: counterfact(url, n, "ask", "ray", concurrency),
        }.items():
            m = fn()
            peer = peer or m.wall_s
            moved = m.concurrency or {}
            print(
                f"| {name} | {m.wall_s:.1f} | {m.wall_s / peer:.2f}x | {m.failed} | {m.refused} "
                f"| {moved.get('cuts', '-')} | {moved.get('lowest', '-')} | "
                f"{m.peak_in_flight} |",
                flush=True,
            )


def part_outage(outage_s: float, concurrency: int = 50, at_s: float = 10.0) -> None:
    n = int(concurrency / 1.25 * (at_s + 30 + 10))  # runs for 10 s after the 30 s judged
    print(
        f"\n## every request refused for {outage_s:g} s after {at_s:g} s (429 + Retry-After: 1), "
        f"concurrency {concurrency}, {n} runs\n"
    )
    print(
        "| system | back in flight at the server after the outage: 50% / 90% of the limit (s) "
        "| lowest limit | cuts | failed |"
    )
    print("|---|---|---|---|---|")
    with stand_in(outage=(at_s, outage_s)) as url:
        for executor in ("local", "ray"):
            m = counterfact(url, n, "ask", executor, concurrency)
            print(outage_row(f"counterfact async, {executor}", m, concurrency), flush=True)


def outage_row(name: str, m: Measured, concurrency: int) -> str:
    """A table row: seconds after the outage until 50% / 90% of the limit were back in flight."""
    half = next((t for t, k in m.after_outage if k >= 0.5 * concurrency), None)
    most = next((t for t, k in m.after_outage if k >= 0.9 * concurrency), None)
    moved = m.concurrency or {}
    return (
        f"| {name} | {_s(half)} / {_s(most)} | {moved.get('lowest', '-')} | "
        f"{moved.get('cuts', '-')} | {m.failed} |"
    )


def _s(value: float | None) -> str:
    return "never" if value is None else f"{value:.1f}"


def _early_refusals(moved: dict[str, Any] | None) -> str:
    """Cuts in the first 5 s, as the limit went (the record has no per-refusal times)."""
    if not moved:
        return "-"
    early = [m[1] for m in moved.get("moves", []) if m[0] < 5 and m[2] == "cut"]
    return f"cuts {len(early)}, to {early[-1]}" if early else "no cut"


def part_max(n: int, concurrency: int) -> None:
    print(f"\n## {concurrency} runs in flight: {n} requests\n")
    print(
        "| system | wall (s) | served latency / concurrency (s) | ratio | peak in flight "
        "| peak RSS (MB) | failed |"
    )
    print("|---|---|---|---|---|---|---|")
    with stand_in() as url:
        for name, fn in {
            f"{concurrency} plain threads + httpx": lambda: threads(url, n, concurrency),
            "counterfact async, ray": lambda: counterfact(url, n, "ask", "ray", concurrency),
            "counterfact async, local": lambda: counterfact(url, n, "ask", "local", concurrency),
        }.items():
            m = fn()
            ideal = m.served_latency_s / concurrency
            print(
                f"| {name} | {m.wall_s:.1f} | {ideal:.1f} | {m.wall_s / ideal:.2f}x | "
                f"{m.peak_in_flight} | {m.peak_rss_mb:.0f} | {m.failed} |",
                flush=True,
            )


def _cpu_sweep(runner: str, runs: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "sweep.yaml"
        cfg.write_text(
            f"name: cpu\nrunner: {RUNNER}:{runner}\nsamples: {runs // 2}\nreference: 'yes'\n"
            "comparator: {kind: exact}\narms: [{id: a}, {id: b, facets: {x: 1}}]\n"
            "executor: {kind: ray}\n"
        )
        cmd = [str(BIN / "counterfact"), "run", str(cfg), "--out", f"{tmp}/o", "--no-report"]
        started = time.perf_counter()
        subprocess.run(cmd, cwd=tmp, check=True, capture_output=True)
        return time.perf_counter() - started


def part_cpu() -> None:
    print("\n## CPU-bound paths from the CLI (fresh local Ray instance, records written)\n")
    print("| runner | runs small / big | wall small (s) | wall big (s) | marginal |")
    print("|---|---|---|---|---|")
    small, big = _cpu_sweep("instant", 50_000), _cpu_sweep("instant", 250_000)
    rate = 200_000 / (big - small)
    print(f"| instant | 50,000 / 250,000 | {small:.1f} | {big:.1f} | {rate:,.0f} runs/s |")
    cpus = os.cpu_count() or 1
    small, big = _cpu_sweep("busy_20ms", 1_000), _cpu_sweep("busy_20ms", 3_000)
    ideal = 2_000 * 0.02 / cpus
    print(
        f"| 20 ms | 1,000 / 3,000 | {small:.1f} | {big:.1f} | {(big - small) / ideal:.3f}x ideal "
        f"({ideal:.0f} s on {cpus} CPUs) |",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--part", action="append", choices=["io", "limit", "weather", "outage", "max", "cpu"]
    )
    parser.add_argument("--small", type=int, default=200)
    parser.add_argument("--big", type=int, default=600)
    parser.add_argument("--limit-runs", type=int, default=1000)
    parser.add_argument("--max-runs", type=int, default=3000)
    parser.add_argument("--max-concurrency", type=int, default=1000)
    parser.add_argument("--weather-runs", type=int, default=1000)
    parser.add_argument("--outage-s", type=float, default=60.0)
    parser.add_argument("--peer-threads", nargs=2, type=int, help=argparse.SUPPRESS)
    parser.add_argument("--peer-asyncio", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peer_threads:
        _peer_threads(*args.peer_threads)
        return
    if args.peer_asyncio:
        _peer_asyncio(*args.peer_asyncio)
        return
    parts = args.part or ["io", "limit", "weather", "outage", "max", "cpu"]
    print(f"# bench_io on {os.cpu_count()} CPUs, python {sys.version.split()[0]}")
    if "io" in parts:
        part_io((args.small, args.big))
    if "limit" in parts:
        part_limit(args.limit_runs)
    if "weather" in parts:
        part_weather(args.weather_runs)
    if "outage" in parts:
        part_outage(args.outage_s)
    if "max" in parts:
        part_max(args.max_runs, args.max_concurrency)
    if "cpu" in parts:
        part_cpu()


if __name__ == "__main__":
    main()
