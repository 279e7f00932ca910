"""The order runs are handed out, against a server that answers a cached prompt prefix faster.

A loopback stand-in for a local model server with one slot (llama.cpp's server keeps one prompt
prefix cached per slot): it answers one request at a time, remembers the last prompt, and takes
``--hit-ms`` plus ``--miss-ms`` times the share of the prompt that is not a prefix of the last
one (the prefill it must redo). Each prompt is the arm's system text then the question's text;
the seed is a sampling parameter, not part of the prompt, so every seed of one (question, arm)
sends the same prompt.

Measured, alternated ``--repeat`` times, the same requests each time:

- ``counterfact, blocks``: ``compare_arms`` on the in-process executor (``concurrency``
  ``--concurrency``), the plan's default order (per question: seed 0 of every arm, then blocks
  of seeds per arm);
- ``counterfact, seed then arm``: the same with ``SEED_BLOCK = 1``, the order before blocks
  (per question, per seed, every arm);
- ``plain loop, grouped``: a ``for`` loop over question, arm, seed (one request at a time);
- ``plain loop, seed then arm``: a ``for`` loop in the old order.

    python scripts/bench_order.py                 # recorded in docs/benchmarks.md
    python scripts/bench_order.py --questions 4 --repeat 1 --no-record
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from benchlog import record

from counterfact import RunContext, compare_arms
from counterfact.orchestrator.engine.sourcing import plan
from counterfact.orchestrator.view.server import bind

ARMS = ["baseline", "terse", "formal", "cautious"]


@dataclass
class StandIn:
    """The ASGI app: one request at a time, the last prompt cached."""

    hit_s: float
    miss_s: float
    last: str = ""
    served: int = 0
    hits: int = 0
    first: float = 0.0
    """When the first request of a measurement was received."""
    done: float = 0.0
    """When the last one was answered."""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def reset(self) -> None:
        self.last, self.served, self.hits, self.first, self.done = "", 0, 0, 0.0, 0.0

    @property
    def span(self) -> float:
        """Seconds from the first request received to the last answered."""
        return self.done - self.first

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["path"] == "/stats":  # and start counting anew
            stats = {"served": self.served, "hits": self.hits, "span": self.span}
            self.reset()
            await _reply(send, stats)
            return
        prompt = json.loads(body)["prompt"]
        self.first = self.first or time.perf_counter()
        async with self.lock:
            shared = _shared(prompt, self.last)
            self.hits += shared == len(prompt)
            self.served += 1
            await asyncio.sleep(self.hit_s + self.miss_s * (1 - shared / len(prompt)))
            self.last = prompt
        await _reply(send, {"text": "yes"})
        self.done = time.perf_counter()


async def _reply(send: Any, data: dict[str, Any]) -> None:
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps(data).encode()})


def _shared(a: str, b: str) -> int:
    """Characters ``a`` and ``b`` share at their start."""
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def serve(port_file: str, hit_ms: float, miss_ms: float) -> None:
    """Serve the stand-in until killed, writing its port to ``port_file`` once it listens."""
    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(
        uvicorn.Config(StandIn(hit_ms / 1000, miss_ms / 1000), log_level="warning", lifespan="off")
    )
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    while not server.started:
        time.sleep(0.01)
    Path(port_file).write_text(str(sock.getsockname()[1]), encoding="utf-8")
    threading.Event().wait()


@contextmanager
def serving(hit_ms: float, miss_ms: float) -> Iterator[str]:
    """The stand-in in a process of its own (as a model server is); its base URL."""
    with tempfile.TemporaryDirectory() as tmp:
        port_file = Path(tmp) / "port"
        code = (
            f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import bench_order;"
            f" bench_order.serve({str(port_file)!r}, {hit_ms!r}, {miss_ms!r})"
        )
        proc = subprocess.Popen([sys.executable, "-c", code])
        try:
            while not port_file.exists() or not port_file.read_text(encoding="utf-8"):
                assert proc.poll() is None, "the stand-in did not start"
                time.sleep(0.05)
            yield f"http://127.0.0.1:{port_file.read_text(encoding='utf-8')}"
        finally:
            proc.kill()  # only the stand-in this script started
            proc.wait(timeout=30)


def prompt(question: str, arm: str) -> str:
    """The arm's system text, then the question's (twice as long)."""
    system = f"You are the {arm} assistant. " * 12
    return system + f"Question {question}: " + "Read the passage and answer yes or no. " * 16


def _runner(url: str) -> Callable[[RunContext], Any]:
    clients: dict[int, httpx.AsyncClient] = {}

    async def run(ctx: RunContext) -> str:
        loop = id(asyncio.get_running_loop())
        if loop not in clients:  # one client per event loop (a new one costs ~30 ms: its TLS)
            clients[loop] = httpx.AsyncClient()
        client = clients[loop]
        reply = await client.post(url, json={"prompt": prompt(ctx.scenario.id, ctx.arm.id)})
        return str(reply.json()["text"])

    return run


def engine(url: str, questions: int, seeds: int, concurrency: int, block: int) -> None:
    """One sweep through ``compare_arms`` with the plan's seed blocks of ``block``."""
    before = plan.SEED_BLOCK
    plan.SEED_BLOCK = block
    try:
        with tempfile.TemporaryDirectory() as tmp:
            compare_arms(
                [{"id": a, "facets": {"system": a}} for a in ARMS],
                _runner(url),
                samples=seeds,
                scenarios=[
                    {"id": f"q{i}", "inputs": {}, "reference": "yes"} for i in range(questions)
                ],
                comparator="exact",
                executor={"kind": "local", "concurrency": concurrency},
                out=Path(tmp) / "o",
            )
    finally:
        plan.SEED_BLOCK = before


def plain(url: str, questions: int, seeds: int, grouped: bool) -> None:
    """A ``for`` loop over the same requests: grouped by prompt, or seed then arm."""
    with httpx.Client() as client:
        for q in range(questions):
            pairs = (
                [(a, s) for a in ARMS for s in range(seeds)]
                if grouped
                else [(a, s) for s in range(seeds) for a in ARMS]
            )
            for arm, _ in pairs:
                client.post(url, json={"prompt": prompt(f"q{q}", arm)}).raise_for_status()


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.2f}/{five:.2f}"


def measure(args: argparse.Namespace) -> list[str]:
    q, s, c = args.questions, args.seeds, args.concurrency
    ways: dict[str, Callable[[str], None]] = {
        "counterfact, blocks (default)": lambda u: engine(u, q, s, c, plan.SEED_BLOCK),
        "counterfact, seed then arm (before)": lambda u: engine(u, q, s, c, 1),
        "plain loop, grouped by prompt": lambda u: plain(u, q, s, grouped=True),
        "plain loop, seed then arm": lambda u: plain(u, q, s, grouped=False),
    }
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    spans: dict[str, list[float]] = {name: [] for name in ways}
    hits: dict[str, int] = {}
    calls = q * len(ARMS) * s
    with serving(args.hit_ms, args.miss_ms) as url:
        httpx.post(f"{url}/stats")
        for _ in range(args.repeat):
            for name, way in ways.items():
                start = time.perf_counter()
                way(url)
                seconds[name].append(time.perf_counter() - start)
                stats = httpx.post(f"{url}/stats").json()
                assert stats["served"] == calls, (name, stats)
                spans[name].append(stats["span"])
                hits[name] = stats["hits"]
                print(f"{name}: {stats['span']:.2f} s, load {_load()}", flush=True)
    best = statistics.median(spans["plain loop, grouped by prompt"])
    rows = [
        f"- {q} questions x {len(ARMS)} arms x {s} seeds = {calls} calls; stand-in: one request "
        f"at a time, {args.hit_ms:g} ms on a cached prompt, + {args.miss_ms:g} ms x the share "
        f"not cached; counterfact on the local executor, concurrency {c}; median of "
        f"{args.repeat}, alternated"
    ]
    for name, took in spans.items():
        median = statistics.median(took)
        rows.append(
            f"- {name}: {calls / median:,.1f} calls/s over the calls' span ({median:.2f} s: "
            f"{', '.join(f'{t:.2f}' for t in took)}; whole {statistics.median(seconds[name]):.2f}"
            f" s), {hits[name]} of {calls} prompts cached, {median / best:.2f}x the grouped loop"
        )
    rows.append(f"- load average at the end {_load()} on {os.cpu_count()} CPUs")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--hit-ms", type=float, default=3.0)
    parser.add_argument("--miss-ms", type=float, default=25.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    rows = measure(args)
    print(*rows, sep="\n")
    if not args.no_record:
        record("bench_order", rows)


if __name__ == "__main__":
    main()
