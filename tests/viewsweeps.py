"""What the viewer tests serve: real sweeps run in-process (a 'before' and an 'after' whose
verdicts differ on some questions, one with hostile outputs and ids), a running sweep simulated
by its files (live.json, a partial runs.jsonl, no summary), and the viewer on loopback."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import uvicorn

from counterfact import RunContext, RunResult, compare_arms
from counterfact.orchestrator.drivers.outputs.report import write_report
from counterfact.orchestrator.view.app import build_app
from counterfact.orchestrator.view.catalog import Catalog
from counterfact.records import LiveState

QUESTIONS = tuple(f"q{i}" for i in range(8))
SEEDS = 6
FLIPS = {"before": {"q0"}, "after": {f"q{i}" for i in range(6)}}
"""Questions on which arm 'alt' answers 'no' (flips against the reference 'yes'); arm 'same'
never does. Over 8 questions, 6 of 6 moved questions is p = 1/64 one-sided: 'alt' is confirmed
after, not before."""
ARMS = [
    {"id": "base", "facets": {"model": "m1"}},
    {"id": "alt", "facets": {"model": "m2"}},
    {"id": "same", "facets": {"model": "m3"}},
]

HOSTILE_ARM = 'alt"><script>window.__pwned="arm"</script>'
HOSTILE_QUESTION = "q<img src=x onerror=window.__pwned='question'>\u202e\x1b[1m&amp;"
HUGE = "y" * 200_000
HOSTILE_OUTPUTS = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=window.__pwned="output">',
    HUGE,
    "esc\x1b[31mred\x00nul\u202ertl\x07bell",
    "</pre></td></tr></table><h1>injected</h1>",
    "ok",
]
TRANSCRIPT = [
    {"role": "system", "content": "Answer with one word."},
    {"role": "user", "content": "Is it <b>bold</b>?"},
    {"role": "assistant", "content": "<script>alert('transcript')</script>"},
]


def _sweep(out: Path, flips: set[str]) -> None:
    def runner(ctx: RunContext) -> RunResult:
        no = ctx.arm.id == "alt" and ctx.scenario.id in flips
        return RunResult(output="no" if no else "yes", manifest=dict(ctx.arm.facets))

    compare_arms(
        ARMS,
        runner,
        samples=SEEDS,
        scenarios=[{"id": q, "inputs": {}, "reference": "yes"} for q in QUESTIONS],
        comparator="exact",
        executor="local",
        name=out.name,
        out=out,
    )


def hostile_sweep(out: Path) -> None:
    """Arm ``HOSTILE_ARM`` answers ``HOSTILE_OUTPUTS[seed]`` with a chat transcript."""

    def runner(ctx: RunContext) -> RunResult:
        if ctx.arm.id == "base":
            return RunResult(output="yes", manifest={"model": "m1", "messages": TRANSCRIPT[:2]})
        manifest = {"model": "m2", "messages": TRANSCRIPT}
        return RunResult(output=HOSTILE_OUTPUTS[ctx.seed], manifest=manifest)

    compare_arms(
        [{"id": "base", "facets": {"model": "m1"}}, {"id": HOSTILE_ARM, "facets": {"model": "m2"}}],
        runner,
        samples=SEEDS,
        scenarios=[{"id": HOSTILE_QUESTION, "inputs": {}, "reference": "yes"}],
        comparator="exact",
        executor="local",
        name="hostile",
        out=out,
    )


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def live_state(**fields: Any) -> LiveState:
    """A running sweep's snapshot, updated now; ``fields`` override."""
    values: dict[str, Any] = {
        "sweep": "running-sweep",
        "status": "running",
        "started_at": now(),
        "updated_at": now(),
        "runs_planned": 48,
        "runs_done": 5,
        "runs_failed": 1,
        "in_flight": 4,
        "waited_429": 2,
        "concurrency": 6,
        "concurrency_max": 16,
        "spend": {"usd": 0.25},
        "budget": {"usd": 10.0},
        "runs_per_s": 2.5,
        "eta_s": 17.2,
    }
    return LiveState(**(values | fields))


def write_live(run_dir: Path, state: LiveState) -> None:
    """live.json as the engine writes it: whole, replaced atomically."""
    tmp = run_dir / ".live.json.tmp"
    tmp.write_text(state.model_dump_json(), encoding="utf-8")
    tmp.replace(run_dir / "live.json")


def running_dir(out: Path, finished: Path, lines: int) -> None:
    """A sweep caught mid-run: ``lines`` of ``finished``'s runs, a torn line, live.json."""
    out.mkdir(parents=True)
    done = (finished / "runs.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (out / "runs.jsonl").write_text("".join(done[:lines]) + done[lines][:30], encoding="utf-8")
    write_live(out, live_state(runs_done=lines))


def make_folder(root: Path) -> Path:
    """runs/{before,after,hostile,running}: what the viewer tests serve."""
    _sweep(root / "before", FLIPS["before"])
    _sweep(root / "after", FLIPS["after"])
    write_report(root / "after")
    hostile_sweep(root / "hostile")
    running_dir(root / "running", root / "after", 10)
    return root


class Viewer:
    """The viewer's app on uvicorn at 127.0.0.1 and a free port, in a thread of this process."""

    def __init__(self, root: Path, compare: Path | None = None) -> None:
        self.catalog = Catalog(root, compare)
        config = uvicorn.Config(
            build_app(self.catalog), host="127.0.0.1", port=0, log_level="error", lifespan="off"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True, name="viewer")

    @property
    def url(self) -> str:
        port = self._server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __enter__(self) -> Viewer:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                msg = "the viewer did not start"
                raise RuntimeError(msg)
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
