"""The sweep's concurrency controller, driven by a fake clock and a fake API (deterministic)."""

from __future__ import annotations

import random

from counterfact.orchestrator.engine.pacing.throttle import (
    BURST,
    PROBE_ROUNDS,
    Throttle,
    start_limit,
)

CHURN = 50
"""Refusals a full API returns in a round before the sweep stops sending (fast: the refused
run gives its slot back at once)."""


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def one_round(throttle: Throttle, clock: Clock, *, cap: int | None, outage: bool = False) -> None:
    """One round of calls at the current limit against an API that holds ``cap`` in flight
    (None: all) and refuses the rest at once, as a worker's slots report them. A refused run
    waits; the slot it frees goes to the next run, refused too, until a cut shrinks the slots
    (then the calls still out come back stale). A call served after a cut it started before is
    not reported (the slots drop it).
    """
    clock.now += 1.0
    limit, epoch = throttle.limit, throttle.epoch
    held = 0 if outage else limit if cap is None else min(limit, cap)
    if held < limit:
        for _ in range(CHURN):
            throttle.report(refused=1)
            if throttle.epoch != epoch:
                throttle.report(stale=limit - held - 1)
                break
    if held and throttle.epoch == epoch:
        throttle.report(served=held)


def test_a_sweep_starts_below_the_configured_limit() -> None:
    assert start_limit(100) == 50
    assert start_limit(1000) == 500
    assert start_limit(25) == 16
    assert start_limit(8) == 8
    assert Throttle(100).limit == 50


def test_sporadic_refusals_at_a_low_rate_do_not_cut() -> None:
    clock = Clock()
    throttle = Throttle(25, clock=clock)
    rng = random.Random(0)  # 3% of 5,000 calls refused, at random, each reported at once
    for _ in range(5_000):
        clock.now += 0.05
        refused = rng.random() < 0.03
        throttle.report(refused=int(refused), served=int(not refused))
    assert throttle.refused > 100
    assert throttle.summary()["cuts"] == 0 and throttle.limit == 25


def test_refusals_back_to_back_cut() -> None:
    clock = Clock()
    throttle = Throttle(100, clock=clock, start=100)
    for _ in range(BURST - 1):
        assert throttle.report(refused=1).limit == 100
    assert throttle.report(refused=1).limit == 80 and throttle.epoch == 1


def test_a_high_refusal_rate_cuts_even_with_served_calls_between() -> None:
    clock = Clock()
    throttle = Throttle(20, clock=clock, start=20)
    for _ in range(40):  # every third call refused: a full API, not the weather
        throttle.report(served=2)
        throttle.report(refused=1, served=0)
        throttle.report(served=0)
        if throttle.epoch:
            break
    assert throttle.epoch == 1 and throttle.limit == 16


def test_refusals_beyond_a_hard_cap_bring_the_limit_under_it_and_keep_it_there() -> None:
    clock = Clock()
    throttle = Throttle(100, clock=clock)
    one_round(throttle, clock, cap=20)  # 50 in flight, 30 refused: 50 -> 40
    for _ in range(5):
        one_round(throttle, clock, cap=20)
    assert 16 <= throttle.limit <= 20
    limits = []
    for _ in range(200):
        one_round(throttle, clock, cap=20)
        limits.append(throttle.limit)
    assert min(limits) >= 20 and max(limits) <= 21
    assert sum(limit > 20 for limit in limits) <= 10  # probes onto the wall grow sparse


def test_a_probe_onto_the_wall_waits_for_clean_rounds() -> None:
    clock = Clock()
    throttle = Throttle(100, clock=clock)
    for _ in range(20):
        one_round(throttle, clock, cap=20)
    assert throttle.wall == 21 and throttle.limit == 20
    rounds = 0
    while throttle.limit == 20:
        one_round(throttle, clock, cap=20)
        rounds += 1
    assert rounds >= PROBE_ROUNDS


def test_recovery_after_an_outage_reaches_90_percent_of_the_last_good_limit_fast() -> None:
    clock = Clock()
    throttle = Throttle(50, clock=clock)
    for _ in range(10):
        one_round(throttle, clock, cap=None)
    assert throttle.limit == 50 and throttle.good == 50
    for _ in range(60):  # a minute of refusals
        one_round(throttle, clock, cap=None, outage=True)
    assert throttle.limit == 1
    rounds = 0
    while throttle.limit < 45:
        one_round(throttle, clock, cap=None)
        rounds += 1
    assert rounds <= 7  # doubling per round: 1 -> 64 in 6 rounds; +1 per round needed 44


def test_slow_start_does_not_exceed_what_the_server_served() -> None:
    clock = Clock()
    throttle = Throttle(1000, clock=clock, start=10)
    served = 0
    for _ in range(400):
        clock.now += 0.01
        throttle.report(served=3)
        served += 3
        assert throttle.limit <= 10 + served
    assert throttle.limit == 1000


def test_a_cut_above_the_last_clean_limit_goes_no_lower_than_it() -> None:
    clock = Clock()
    throttle = Throttle(22, clock=clock, start=20)
    throttle.report(served=20)  # a clean round at 20, then fast growth
    assert throttle.good == 20 and throttle.limit > 20
    for _ in range(BURST):
        throttle.report(refused=1)
    assert throttle.limit == 20 and throttle.restore == 20


def test_refusals_of_calls_started_before_a_cut_do_not_cut_again() -> None:
    clock = Clock()
    throttle = Throttle(100, clock=clock, start=100)
    throttle.report(refused=BURST)
    assert throttle.limit == 80 and throttle.epoch == 1
    clock.now = 5.0  # long calls started before the cut come back refused: counted, no cut
    assert throttle.report(stale=70).limit == 80
    assert throttle.refused == BURST + 70 and throttle.summary()["cuts"] == 1


def test_the_limit_never_falls_below_one() -> None:
    clock = Clock()
    throttle = Throttle(2, clock=clock)
    for step in range(40):
        clock.now = float(step)
        throttle.report(refused=1)
    assert throttle.limit == 1


def test_the_summary_says_where_the_limit_started_and_what_was_served_cleanly() -> None:
    clock = Clock()
    throttle = Throttle(40, clock=clock)
    one_round(throttle, clock, cap=None)
    summary = throttle.summary()
    assert summary["start"] == 20 and summary["last_good"] == 20
    assert summary["configured"] == 40 and summary["lowest"] == 20
    assert [m[2] for m in summary["moves"]] == ["grow"]  # type: ignore[attr-defined]
