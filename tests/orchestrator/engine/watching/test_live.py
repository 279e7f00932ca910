"""The live tracker's counts and the ticker that writes ``live.json``."""

from __future__ import annotations

import time
from pathlib import Path

from structlog.testing import capture_logs

from counterfact.orchestrator.engine.pacing.throttle import Throttle, ThrottleNow
from counterfact.orchestrator.engine.watching.live import LiveTracker
from counterfact.orchestrator.engine.watching.liveticker import LiveTicker
from counterfact.records import LIVE_FILE, LiveState, read_live
from counterfact.records.runs import RunRecord


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Store:
    """Stands for the run store's two counts and the spend tally."""

    def __init__(self) -> None:
        self.done = self.failed = 0
        self.spend: dict[str, float] = {}

    def counts(self) -> tuple[int, int]:
        return self.done, self.failed

    def totals(self) -> dict[str, float]:
        return dict(self.spend)


def record(seed: int, rate_limited: int = 0) -> RunRecord:
    return RunRecord(
        scenario="q",
        arm="a",
        seed=seed,
        output="yes",
        manifest=None,
        error=None,
        cost={"usd": 0.01},
        duration_s=0.1,
        finished_at="2026-01-01T00:00:00+00:00",
        rate_limited=rate_limited,
    )


def tracker(store: Store, clock: Clock) -> LiveTracker:
    live = LiveTracker(
        "s",
        counts=store.counts,
        spend=store.totals,
        budget={"usd": 5},
        concurrency_max=8,
        clock=clock,
    )
    live.planned = 100
    return live


def test_counts_rate_and_eta_while_running() -> None:
    store, clock = Store(), Clock()
    live = tracker(store, clock)
    first = live.snapshot(None)
    assert (first.status, first.in_flight, first.runs_per_s, first.eta_s) == (
        "starting",
        0,
        None,
        None,
    )
    live.started(0)  # an empty take: nothing started yet
    assert live.snapshot(None).status == "starting"
    live.started(6)
    clock.now += 2.0
    for seed in range(4):
        live.returned(record(seed, rate_limited=seed))
    store.done, store.failed, store.spend = 10, 1, {"usd": 0.04}  # 6 of them read back
    state = live.snapshot(None)
    assert state.status == "running" and state.in_flight == 2
    assert (state.runs_done, state.runs_failed, state.runs_planned) == (10, 1, 100)
    # 4 runs back in 2 s: 2 runs/s; 90 runs left: 45 s
    assert (state.runs_per_s, state.eta_s) == (2.0, 45.0)
    assert state.waited_429 == 0 + 1 + 2 + 3  # no throttle: what the records say they waited
    assert (state.concurrency, state.concurrency_max) == (None, 8)
    assert state.spend == {"usd": 0.04} and state.budget == {"usd": 5.0}


def test_the_rate_stops_when_the_runs_end_and_nothing_is_in_flight_after() -> None:
    store, clock = Store(), Clock()
    live = tracker(store, clock)
    live.started(4)
    clock.now += 1.0
    for seed in range(3):
        live.returned(record(seed))
    live.mark("judging")
    clock.now += 60.0  # judging takes a minute: the run rate is not diluted by it
    judging = live.snapshot(None)
    assert (judging.runs_per_s, judging.eta_s, judging.in_flight) == (3.0, None, 1)
    live.mark("interrupted")
    assert live.snapshot(None).in_flight == 0  # cancelled runs are not in flight any more


def test_the_throttle_gives_the_limit_and_the_429s_of_this_sweep_only() -> None:
    store, clock = Store(), Clock()
    live = tracker(store, clock)
    live.returned(record(0, rate_limited=2))
    # a reused executor's throttle had met 10 refusals before this sweep; 7 since
    state = live.snapshot(ThrottleNow(limit=5, ceiling=25, refused=17), refused_before=10)
    assert (state.concurrency, state.concurrency_max, state.waited_429) == (5, 25, 7)
    # records that came back may know of more than the throttle's last reading (Ray: a second old)
    state = live.snapshot(ThrottleNow(limit=5, ceiling=25, refused=11), refused_before=10)
    assert state.waited_429 == 2


def test_a_throttle_reading_is_its_limit_ceiling_and_refusals() -> None:
    throttle = Throttle(40)
    throttle.report(refused=1, served=0)
    assert throttle.now() == ThrottleNow(limit=throttle.limit, ceiling=40, refused=1)


def test_an_unknown_plan_has_no_eta_and_a_non_finite_cost_is_left_out() -> None:
    store, clock = Store(), Clock()
    live = LiveTracker("b", counts=store.counts, spend=store.totals, clock=clock)
    live.started(2)
    clock.now += 1.0
    live.returned(record(0))
    store.done, store.spend = 1, {"usd": 0.5, "tokens": float("nan")}
    state = live.snapshot(None)
    assert (state.runs_planned, state.eta_s, state.runs_per_s) == (1, None, 1.0)
    assert state.spend == {"usd": 0.5}
    LiveState.model_validate_json(state.model_dump_json())  # valid JSON, read back as written


def test_the_ticker_refreshes_live_json_while_nothing_happens(tmp_path: Path) -> None:
    store = Store()
    live = LiveTracker("s", counts=store.counts, spend=store.totals)
    shown: list[LiveState] = []
    ticker = LiveTicker(live, lambda: None, tmp_path / LIVE_FILE, shown.append, every_s=0.05)
    ticker.start()
    first = read_live(tmp_path)
    assert first.status == "starting"
    deadline = time.monotonic() + 10
    while read_live(tmp_path).updated_at == first.updated_at and time.monotonic() < deadline:
        time.sleep(0.01)
    assert read_live(tmp_path).updated_at > first.updated_at  # no run moved, the clock did
    ticker.mark("judging")
    ticker.close("finished")
    assert read_live(tmp_path).status == "finished"
    assert shown[0].status == "starting" and shown[-1].status == "finished"
    assert [p.name for p in tmp_path.iterdir()] == [LIVE_FILE]  # no temporary file left


def test_a_snapshot_that_cannot_be_written_is_logged_once_and_the_sweep_goes_on(
    tmp_path: Path,
) -> None:
    store = Store()
    live = LiveTracker("s", counts=store.counts, spend=store.totals)
    gone = tmp_path / "gone" / LIVE_FILE  # its directory does not exist
    with capture_logs() as logs:
        ticker = LiveTicker(live, lambda: None, gone, None, every_s=0.02)
        ticker.start()
        time.sleep(0.2)
        ticker.close("finished")
    failed = [e for e in logs if e["event"] == "live.write_failed"]
    assert len(failed) == 1 and "FileNotFoundError" in failed[0]["error"]


def test_a_limiter_that_cannot_be_read_is_logged_once_and_the_snapshots_go_on(
    tmp_path: Path,
) -> None:
    # reading the executor's limiter failed silently (its figures just froze); now it is said
    # once, and live.json keeps being written
    store = Store()
    live = LiveTracker("s", counts=store.counts, spend=store.totals)

    def unreadable() -> None:
        raise ConnectionError("the throttle actor is gone")

    with capture_logs() as logs:
        ticker = LiveTicker(live, unreadable, tmp_path / LIVE_FILE, None, every_s=0.02)
        ticker.start()
        time.sleep(0.2)
        ticker.close("finished")
    unread = [e for e in logs if e["event"] == "live.throttle_unread"]
    assert len(unread) == 1 and "ConnectionError: the throttle actor is gone" in unread[0]["error"]
    assert read_live(tmp_path).status == "finished"
