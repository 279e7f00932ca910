"""``counterfact blame`` against two anchors on the same calls and seeds: leave-one-out (each part
removed alone) and a ContextCite-style surrogate (m random ablations, a sparse linear fit, its
top parts taken as the culprits), on a loopback stand-in model whose answer depends on its
context (tests/context_model.py).

Cases, at 8, 16, 32 and 64 parts: one planted culprit; two planted passages carrying the same
wrong fact (only removing both changes the answer); a culprit that shares no word with the
answer; no culprit (the model answers wrongly whatever the context). Each case is run at
temperature 0 (a deterministic model) and at temperature 0.7 with 10% of answers flipped by
sampling (seeded per request and seed, so every method meets the same noise).

Reported per method and cell: planted parts all found, nothing else claimed, any claim on a
no-culprit case (each with a Wilson 95% interval), and model calls. Then the wall time of one
``counterfact blame`` command over 100 calls against one over 1 call, at 0.5 s latency.

    python scripts/bench_blame.py                  # everything (about 15 minutes)
    python scripts/bench_blame.py --reps 4 --part accuracy
    python scripts/bench_blame.py --part scale --calls 200 --calls 2000
    python scripts/bench_blame.py --part accuracy --temperature 0.7   # the sampled cells
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import binomtest
from sklearn.linear_model import Lasso

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from counterfact.orchestrator.importers.blame import BlameOptions, blame_call  # noqa: E402
from counterfact.orchestrator.importers.recorded import RecordedCall  # noqa: E402
from counterfact.orchestrator.runners.chatparts import query_ids, split, without  # noqa: E402
from scripts.benchlog import record  # noqa: E402
from tests.context_model import WRONG, context_model, passages, recorded_call  # noqa: E402
from tests.standin import StandIn  # noqa: E402

SIZES = (8, 16, 32, 64)
KINDS = ("one", "two", "no-word", "none")
MARK_ONE = "the capital moved to Sydney in 2021"
MARK_TWO = ("seat of government is now Sydney", "Sydney hosts parliament since")
MARK_NOWORD = "the legislature relocated to the harbour city"
NOISE = 0.1


@dataclass(frozen=True)
class Case:
    """One recorded call and what is planted in it."""

    size: int
    kind: str
    temperature: float
    rep: int
    planted: tuple[int, ...]
    """Passage indexes planted (their part ids are m1.p<index>)."""

    @property
    def markers(self) -> tuple[str, ...]:
        return {"one": (MARK_ONE,), "two": MARK_TWO, "no-word": (MARK_NOWORD,), "none": ()}[
            self.kind
        ]

    def call(self) -> dict[str, Any]:
        texts = {"one": [MARK_ONE], "two": list(MARK_TWO), "no-word": [MARK_NOWORD], "none": []}
        planted = {
            i: f"Passage {i}: {t}." for i, t in zip(self.planted, texts[self.kind], strict=True)
        }
        n = self.size - 2  # the system message and the question are parts too
        return recorded_call(passages(n, planted), temperature=self.temperature)

    @property
    def truth(self) -> set[str]:
        return {f"m1.p{i}" for i in self.planted}


def cases(reps: int, temperature: float) -> list[Case]:
    rng = np.random.default_rng(20261204)
    found = []
    for size in SIZES:
        for kind in KINDS:
            k = {"one": 1, "two": 2, "no-word": 1, "none": 0}[kind]
            for rep in range(reps):
                idx = tuple(sorted(rng.choice(size - 2, size=k, replace=False).tolist()))
                found.append(Case(size, kind, temperature, rep, idx))
    return found


@dataclass
class Tally:
    """One method's outcomes in one cell."""

    found: list[bool] = field(default_factory=list)
    clean: list[bool] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)


Answer = Callable[[dict[str, Any]], str]


def _ask(model: Answer, call: dict[str, Any], removed: Sequence[str], seed: int) -> bool:
    """True when the answer is still the recorded (wrong) one."""
    body = call["request"]
    sent, _ = without(body["messages"], removed, "paragraphs")
    return model({**body, "messages": sent, "seed": seed}) == WRONG


def _suspects(call: dict[str, Any]) -> list[str]:
    messages = call["request"]["messages"]
    held = set(query_ids(messages, "paragraphs"))
    return [p.id for p in split(messages, "paragraphs") if p.id not in held]


def leave_one_out(model: Answer, call: dict[str, Any], samples: int) -> tuple[set[str], int]:
    """Each part removed alone; claimed when removing it changed the answer on a majority of
    seeds (the baseline's own held answer is not required: LOO has no such gate)."""
    suspects = _suspects(call)
    claimed = {
        s
        for s in suspects
        if sum(not _ask(model, call, [s], seed) for seed in range(samples)) * 2 > samples
    }
    return claimed, (len(suspects) + 1) * samples


def surrogate(model: Answer, call: dict[str, Any], m: int, k: int) -> tuple[set[str], int]:
    """ContextCite-style: m random ablations (each part kept with probability 1/2), one call
    each, a Lasso fit of 'the answer held' on the kept-mask; the top-k parts by weight whose
    weight is at least 0.1 are claimed."""
    suspects = _suspects(call)
    rng = np.random.default_rng(len(suspects) * 1000 + m)
    masks = rng.random((m, len(suspects))) < 0.5
    y = np.array(
        [
            _ask(
                model, call, [s for s, keep in zip(suspects, row, strict=True) if not keep], seed=i
            )
            for i, row in enumerate(masks)
        ],
        dtype=float,
    )
    fit = Lasso(alpha=0.01).fit(masks.astype(float), y)
    order = np.argsort(-fit.coef_)[:k]
    return {suspects[i] for i in order if fit.coef_[i] >= 0.1}, m


def _blame(api: StandIn, case: Case, samples: int) -> tuple[set[str], int]:
    data = case.call()
    call = RecordedCall("case", data["request"], WRONG, "bench")
    options = BlameOptions(base_url=api.base_url, samples=samples, max_probes=400)
    result = blame_call(call, options, run_dir=None, check=False)
    claimed = {p for c in result.record.culprits for p in c}
    return claimed, result.record.execution.runs_used


def wilson(hits: Sequence[bool]) -> str:
    if not hits:
        return "-"
    ci = binomtest(sum(hits), len(hits)).proportion_ci(method="wilson")
    return f"{sum(hits)}/{len(hits)} [{ci.low:.2f}, {ci.high:.2f}]"


def accuracy(reps: int, temperatures: Sequence[float]) -> list[str]:
    lines = [
        "| temperature | parts | case | method | planted found | nothing else | calls (mean) |",
        "|---|---|---|---|---|---|---|",
    ]
    for temperature, samples in ((0.0, 2), (0.7, 12)):
        if temperature not in temperatures:
            continue
        noise = NOISE if temperature else 0.0
        tallies: dict[tuple[int, str, str], Tally] = {}
        for case in cases(reps, temperature):
            model = context_model(case.markers, noise=noise) if case.markers else None
            answer = model or context_model([], noise=noise)
            with StandIn(median_s=0.0005, p95_s=0.001, answer=answer) as api:
                got = {"blame": _blame(api, case, samples)}
            data = case.call()
            got["leave-one-out"] = leave_one_out(answer, data, samples)
            for m in (32, 64, 128):
                got[f"surrogate m={m}"] = surrogate(answer, data, m, max(1, len(case.truth)))
            for method, (claimed, calls) in got.items():
                t = tallies.setdefault((case.size, case.kind, method), Tally())
                t.found.append(case.truth <= claimed if case.truth else not claimed)
                t.clean.append(claimed <= case.truth)
                t.calls.append(calls)
        for (size, kind, method), t in sorted(tallies.items()):
            found = wilson(t.found)
            lines.append(
                f"| {temperature:g} | {size} | {kind} | {method} | {found} | {wilson(t.clean)} "
                f"| {np.mean(t.calls):.0f} |"
            )
        print("\n".join(lines[-len(tallies) :]), flush=True)
    return lines


def _calls_dir(folder: Path, n: int) -> None:
    folder.mkdir(parents=True)
    for i in range(n):
        data = recorded_call(passages(14, {(i * 5) % 14: f"Passage x: {MARK_ONE}."}))
        (folder / f"{i:06d}.json").write_text(json.dumps(data))


def wall(latency: float, concurrency: int, executor: str = "local") -> list[str]:
    """One whole ``counterfact blame`` command over 1 call and over 100, the same calls
    (``executor``: ``ray`` starts a local Ray instance in each command, its start included).
    """
    out = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        StandIn(median_s=latency, p95_s=latency * 1.2, answer=context_model([MARK_ONE])) as api,
    ):
        root = Path(tmp)
        _calls_dir(root / "one", 1)
        _calls_dir(root / "many", 100)
        env = dict(os.environ, OPENAI_API_KEY="none")
        took = {}
        for name in ("one", "many"):
            args = [
                str(Path(sys.executable).parent / "counterfact"),
                "blame",
                str(root / name),
                "--base-url",
                api.base_url,
                "--out",
                str(root / f"out-{name}"),
                "--concurrency",
                str(concurrency),
                "--executor",
                executor,
            ]
            began = time.perf_counter()
            done = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
            took[name] = time.perf_counter() - began
            assert done.returncode == 0, done.stderr[-2000:]
        out.append(
            f"| {executor} | {latency:g} s | {concurrency} | {took['one']:.1f} s | "
            f"{took['many']:.1f} s | "
            f"{took['many'] / took['one']:.2f}x |"
        )
        print(out[-1], flush=True)
    return out


def scale(n: int) -> list[str]:
    """One ``counterfact blame DIR`` over ``n`` calls (3 in 4 with a planted passage, 10 parts,
    temperature 0) at 2 ms latency: wall time, the command's peak RSS, what it printed."""
    import psutil

    with (
        tempfile.TemporaryDirectory() as tmp,
        StandIn(median_s=0.002, p95_s=0.004, answer=context_model([MARK_ONE])) as api,
    ):
        calls = Path(tmp) / "calls"
        calls.mkdir()
        for i in range(n):
            planted = {i % 8: f"Passage x: {MARK_ONE}."} if i % 4 else {}
            (calls / f"{i:06d}.json").write_text(json.dumps(recorded_call(passages(8, planted))))
        args = [str(Path(sys.executable).parent / "counterfact"), "blame", str(calls)]
        args += ["--base-url", api.base_url, "--out", str(Path(tmp) / "o"), "--no-report"]
        began, peak = time.perf_counter(), 0
        env = dict(os.environ, OPENAI_API_KEY="none")
        proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        watched = psutil.Process(proc.pid)
        while proc.poll() is None:
            with contextlib.suppress(psutil.Error):
                peak = max(peak, watched.memory_info().rss)
            time.sleep(0.2)
        out = proc.stdout.read() if proc.stdout else b""
        took = time.perf_counter() - began
        lines = (Path(tmp) / "o" / "blame.jsonl").read_bytes()
        row = (
            f"| {n:,} | {took:.1f} s | {peak / 2**20:.0f} MiB | {len(out.splitlines())} lines "
            f"| {len(lines) / n:.0f} B a call | {api.stats.served:,} |"
        )
    print(row, flush=True)
    return [row]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--part", action="append", choices=["accuracy", "wall", "scale"])
    parser.add_argument("--calls", type=int, action="append")
    parser.add_argument("--concurrency", type=int, action="append")
    parser.add_argument("--executor", choices=["local", "ray"], default="local", help="wall")
    parser.add_argument(
        "--temperature", type=float, action="append", choices=[0.0, 0.7], help="accuracy cells"
    )
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "none")  # the stand-in takes no key
    parts = args.part or ["accuracy", "wall"]
    lines: list[str] = []
    if "accuracy" in parts:
        lines += accuracy(args.reps, args.temperature or (0.0, 0.7))
    if "wall" in parts:
        lines += [
            "",
            "| executor | latency | --concurrency | 1 call | 100 calls | ratio |",
            "|---|---|---|---|---|---|",
        ]
        for concurrency in args.concurrency or (16, 64, 100):
            lines += wall(0.5, concurrency, args.executor)
    if "scale" in (args.part or []):
        lines += [
            "",
            "| calls | wall | peak RSS | printed | blame.jsonl | model calls |",
            "|---|---|---|---|---|---|",
        ]
        for n in args.calls or (200, 2000):
            lines += scale(n)
    record("bench_blame", lines)


if __name__ == "__main__":
    main()
