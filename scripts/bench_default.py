"""The user's first API-bound command, whole: ``counterfact run`` with no executor named (the
default picks the work's executor) against 100 plain threads doing the same calls, each started
as its own process, start-up included; and Ray given an address (an existing cluster) holding
1,000 calls in flight. Issue 28 item 1's targets, measured in one run against the peer:

- ``whole``: 400 calls at concurrency 100, the whole command: <= 1.25x 100 plain threads' wall
  (the threads' process starts Python and imports httpx; counterfact's also loads the sweep,
  writes records and judges them), process tree <= 600 MB. Also the marginal (800 minus 400
  calls), which takes start-up out.
- ``address``: a Ray head started here (``ray start --head --block``, no dashboard) and its
  address given to ``counterfact run --address``: 1,000 allowed in flight, >= 950 peak at the
  server, within 1.5 GiB (the command's tree plus the cluster's processes, each tree's peak);
  the default command (in-process) beside it on the same stand-in.
- ``weather`` / ``limit`` / ``outage``: issue 28 item 2's refusal scenarios, by default and at
  a Ray address (Inspect AI beside the first two).

The stand-in API is ``tests/standin.py`` (lognormal latency, median 1 s, p95 3 s), as for
``bench_io.py``. Each part runs ``--repeat`` times (default 2) so a noisy machine shows.

    python scripts/bench_default.py                 # every part, twice (about 25 minutes)
    python scripts/bench_default.py --part whole --repeat 1
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_io import (
    BIN,
    RUNNER,
    Measured,
    _done,
    _measure,
    bare_asyncio,
    inspect_ai,
    outage_row,
    stand_in,
    threads,
)

from tests.cluster import free_port, kill, processes_of


def _sweep(tmp: Path, n: int, concurrency: int) -> Path:
    cfg = tmp / "sweep.yaml"
    cfg.write_text(
        f"name: io\nrunner: {RUNNER}:ask\nsamples: {n // 2}\nreference: Paris\n"
        "comparator: {kind: contains}\narms: [{id: a}, {id: b, facets: {x: 1}}]\n"
        f"executor: {{concurrency: {concurrency}}}\n"
    )
    return cfg


def default_command(
    url: str,
    n: int,
    concurrency: int,
    address: str | None = None,
    extra: dict[str, str] | None = None,
) -> Measured:
    """``counterfact run`` as a user types it: no executor kind, ``--address`` when given."""
    with tempfile.TemporaryDirectory() as tmp:
        cfg = _sweep(Path(tmp), n, concurrency)
        cmd = [str(BIN / "counterfact"), "run", str(cfg), "--out", f"{tmp}/o"]
        if address is not None:
            cmd += ["--address", address]
        env = {**os.environ, "BENCH_BASE_URL": url, **(extra or {})}
        env.pop("RAY_ADDRESS", None)
        wall, peak = _measure(cmd, url, env, Path(tmp))
        out = Path(tmp) / "o"
        runs = [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines()]
        summary = json.loads((out / "summary.json").read_text())
    failed = sum(r["error"] is not None for r in runs) + (n - len(runs))
    measured = _done(url, wall, peak, failed)
    ran = summary.get("execution") or summary  # summary schema 10 embeds them; older: flat
    measured.concurrency = {
        **(ran.get("concurrency") or {}),
        "executor": summary.get("executor"),
        "timings": ran.get("timings"),
    }
    return measured


def part_whole(small: int, big: int, concurrency: int = 100) -> None:
    print(f"\n### whole command: {small} calls (and {big}) at concurrency {concurrency}\n")
    print(
        f"| system | wall (s) | vs threads | peak tree RSS (MB) | marginal {big}-{small} (s) "
        "| marginal vs threads | failed | executor |"
    )
    print("|---|---|---|---|---|---|---|---|")
    with stand_in() as url:
        t_small, t_big = threads(url, small, concurrency), threads(url, big, concurrency)
        c_small = default_command(url, small, concurrency)
        c_big = default_command(url, big, concurrency)
    t_marginal = t_big.wall_s - t_small.wall_s
    c_marginal = c_big.wall_s - c_small.wall_s
    print(
        f"| {concurrency} plain threads + httpx | {t_small.wall_s:.2f} | 1.00x | "
        f"{t_small.peak_rss_mb:.0f} | {t_marginal:.2f} | 1.00x | 0 | - |"
    )
    executor = (c_small.concurrency or {}).get("executor")
    print(
        f"| counterfact run (default executor) | {c_small.wall_s:.2f} | "
        f"{c_small.wall_s / t_small.wall_s:.2f}x | {c_small.peak_rss_mb:.0f} | "
        f"{c_marginal:.2f} | {c_marginal / t_marginal:.2f}x | {c_small.failed + c_big.failed} "
        f"| {executor} |",
        flush=True,
    )


def _ray_env(tmp: Path, url: str) -> dict[str, str]:
    """The environment that may talk to this script's head (Ray's token authentication on, as
    ``tests/cluster.py`` sets it; the token is the temp dir's random name), and that the
    cluster's workers inherit (the stand-in's URL: a driver's environment stays its own)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    return env | {
        "BENCH_BASE_URL": url,
        "RAY_TMPDIR": str(tmp),
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": tmp.name.encode().hex().ljust(32, "0"),
    }


def _ray_head(tmp: Path, url: str) -> str:
    """A Ray head of this script's own, as ``tests/cluster.py`` starts one (its own temp dir,
    no dashboard); stopped with :func:`_stop_head`, which touches nothing else on the machine.
    """
    port = free_port()
    env = _ray_env(tmp, url)
    cmd = [
        str(BIN / "ray"), "start", "--head", f"--port={port}", "--node-ip-address=127.0.0.1",
        "--include-dashboard=false",
    ]  # fmt: skip
    subprocess.run(cmd, env=env, capture_output=True, check=True, timeout=180)
    address = f"127.0.0.1:{port}"
    probe = f"import ray; ray.init(address='{address}', logging_level='ERROR')"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True)
        if done.returncode == 0:
            return address
        time.sleep(1)
    _stop_head(tmp)
    raise SystemExit("the Ray head took no driver within 120 s")


def _stop_head(tmp: Path) -> None:
    kill(processes_of([str(tmp)]))


def _cluster_rss(tmp: Path) -> float:
    total = 0
    for pid in processes_of([str(tmp)]):
        with suppress(psutil.Error):
            total += psutil.Process(pid).memory_info().rss
    return total / 2**20


class _PeakOf:
    """Polls ``read`` (MB) every 0.2 s on a thread; keeps the peak."""

    def __init__(self, read: Callable[[], float]) -> None:
        self._read = read
        self.peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._read())
            self._stop.wait(0.2)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak


def part_address(n: int, concurrency: int) -> None:
    """Ray at an address holding ``concurrency`` in flight; the peer, on the same stand-in in
    the same run, is the default command (in-process), which shows what this machine and the
    stand-in let any one client hold."""
    print(f"\n### Ray at an address: {n} calls, {concurrency} allowed in flight\n")
    print(
        "| system | wall (s) | peak in flight at the server | vs in-process | "
        "command tree RSS (MB) | cluster RSS (MB) | total (MB) | failed |"
    )
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="cfray") as tmp, stand_in() as url:
        local = default_command(url, n, concurrency)
        address = _ray_head(Path(tmp), url)
        peak = _PeakOf(lambda: _cluster_rss(Path(tmp)))
        try:
            m = default_command(url, n, concurrency, address, _ray_env(Path(tmp), url))
        finally:
            cluster_mb = peak.stop()
            _stop_head(Path(tmp))
    print(
        f"| counterfact run (default: in-process) | {local.wall_s:.1f} | {local.peak_in_flight} "
        f"| 1.00x | {local.peak_rss_mb:.0f} | - | {local.peak_rss_mb:.0f} | {local.failed} |"
    )
    print(
        f"| counterfact run --address | {m.wall_s:.1f} | {m.peak_in_flight} | "
        f"{m.peak_in_flight / max(local.peak_in_flight, 1):.2f}x | {m.peak_rss_mb:.0f} | "
        f"{cluster_mb:.0f} | {m.peak_rss_mb + cluster_mb:.0f} | {m.failed} |",
        flush=True,
    )


@contextmanager
def ray_head(url: str) -> Iterator[tuple[str, dict[str, str]]]:
    """A Ray head of this script's own for the sweeps against ``url``: (address, environment)."""
    with tempfile.TemporaryDirectory(prefix="cfray") as tmp:
        address = _ray_head(Path(tmp), url)
        try:
            yield address, _ray_env(Path(tmp), url)
        finally:
            _stop_head(Path(tmp))


def _row(name: str, m: Measured, peer: float, n: int) -> str:
    info = m.concurrency or {}
    return (
        f"| {name} | {m.wall_s:.1f} | {m.wall_s / peer:.2f}x | {m.failed} | {m.refused} | "
        f"{m.refused / n:.3f} | {info.get('cuts', '-')} | {info.get('lowest', '-')} "
        f"| {m.peak_in_flight} |"
    )


def part_refusals(kind: str, n: int, concurrency: int) -> None:
    """``weather``: 3% of calls refused at random at ``concurrency``; the peer a bare asyncio
    loop honouring Retry-After. ``limit``: a server that holds 20 in flight; the peer the ideal
    (served latency / 20). counterfact by default (in-process) and at a Ray address (no Ray
    start-up in the wall), Inspect AI beside them."""
    server: dict[str, Any] = {"refuse_rate": 0.03} if kind == "weather" else {"max_in_flight": 20}
    title = (
        f"3% of calls refused at random (429 + Retry-After: 1), concurrency {concurrency}"
        if kind == "weather"
        else f"a server that holds 20 in flight (429 + Retry-After: 1 beyond), concurrency "
        f"{concurrency}"
    )
    print(f"\n### {title}, {n} calls\n")
    print(
        "| system | wall (s) | vs peer | failed | 429s | 429s per call | cuts | lowest limit "
        "| peak in flight |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    with stand_in(**server) as url:
        rows: list[tuple[str, Measured]] = []
        if kind == "weather":
            rows.append(
                ("bare asyncio + httpx, honours Retry-After", bare_asyncio(url, n, concurrency))
            )
        local = default_command(url, n, concurrency)
        rows.append(("counterfact run (default: in-process)", local))
        with ray_head(url) as (address, env):
            rows.append(
                (
                    "counterfact run --address (Ray)",
                    default_command(url, n, concurrency, address, env),
                )
            )
        rows.append(
            (f"Inspect AI, --max-connections {concurrency}", inspect_ai(url, n, concurrency))
        )
    peer = rows[0][1].wall_s if kind == "weather" else local.served_latency_s / 20
    if kind == "limit":
        print(f"| ideal: served latency / 20 | {peer:.1f} | 1.00x | - | - | - | - | - | 20 |")
    for name, m in rows:
        print(_row(name, m, peer, n), flush=True)


def part_outage(outage_s: float, concurrency: int = 50, at_s: float = 10.0) -> None:
    """Every call refused for ``outage_s`` after ``at_s``: how soon after it the calls in flight
    at the server are back to 50% and 90% of the limit (target: 90% within 30 s), in-process and
    at a Ray address; the same scenario as ``bench_io.py --part outage``."""
    n = int(concurrency / 1.25 * (at_s + outage_s + 10))  # runs go on for ~10 s after it
    print(
        f"\n### every call refused for {outage_s:g} s after {at_s:g} s (429 + Retry-After: 1), "
        f"concurrency {concurrency}, {n} calls\n"
    )
    print("| system | back to 50% / 90% of the limit (s) | lowest limit | cuts | failed |")
    print("|---|---|---|---|---|")
    rows: list[tuple[str, Measured]] = []
    with stand_in(outage=(at_s, outage_s)) as url:
        rows.append(("counterfact run (default: in-process)", default_command(url, n, concurrency)))
    with stand_in(outage=(at_s, outage_s)) as url, ray_head(url) as (address, env):
        m = default_command(url, n, concurrency, address, env)
        rows.append(("counterfact run --address (Ray)", m))
    for name, m in rows:
        print(outage_row(name, m, concurrency), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--part", action="append", choices=["whole", "address", "weather", "limit", "outage"]
    )
    parser.add_argument("--refusal-runs", type=int, default=1000)
    parser.add_argument("--small", type=int, default=400)
    parser.add_argument("--big", type=int, default=800)
    parser.add_argument("--max-runs", type=int, default=3000)
    parser.add_argument("--max-concurrency", type=int, default=1000)
    parser.add_argument("--outage-s", type=float, default=60.0)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    parts = args.part or ["whole", "address", "weather", "limit", "outage"]
    print(f"# bench_default on {os.cpu_count()} CPUs, python {sys.version.split()[0]}")
    for i in range(args.repeat):
        print(f"\n## run {i + 1} of {args.repeat}")
        if "whole" in parts:
            part_whole(args.small, args.big)
        if "address" in parts:
            part_address(args.max_runs, args.max_concurrency)
        if "weather" in parts:
            part_refusals("weather", args.refusal_runs, 25)
        if "limit" in parts:
            part_refusals("limit", args.refusal_runs, 100)
        if "outage" in parts:
            part_outage(args.outage_s)


if __name__ == "__main__":
    main()
