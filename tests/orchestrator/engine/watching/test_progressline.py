"""The progress line's text, on examples: every part, the parts left out, the width."""

from __future__ import annotations

import pytest

from counterfact.orchestrator.engine.watching.progressline import (
    Shown,
    clock_text,
    progress_text,
    spend_text,
)

API_SWEEP = Shown(
    done=340,
    total=1000,
    rate=12.3,
    in_flight=18,
    waited_429=42,
    concurrency=18,
    concurrency_max=25,
    spend={"usd": 1.234, "tokens": 48_200.0},
    budget={"usd": 20.0},
)


def test_an_api_sweep_shows_every_part() -> None:
    # 660 runs left at 12.3 runs/s: 53.66 s, shown in whole seconds
    assert progress_text(API_SWEEP) == (
        "340/1,000, 18 in flight, 429s 42, conc 18/25, $1.23 of $20, 12.3 runs/s, ETA 00:53"
    )


def test_parts_that_do_not_apply_are_left_out() -> None:
    # no 429 yet, runs that do not overlap (no throttle), no cost reported, no budget
    plain = Shown(done=5, total=10, rate=2.0, in_flight=1)
    assert progress_text(plain) == "5/10, 1 in flight, 2.0 runs/s, ETA 00:02"
    # before the first run finished there is no rate, so no ETA either
    assert progress_text(Shown(done=0, total=10)) == "0/10"
    # all done: no ETA; failed runs are counted last
    assert progress_text(Shown(done=10, total=10, rate=4.0, failed=2)) == (
        "10/10, 4.0 runs/s, 2 failed"
    )


def test_a_limit_without_a_configured_ceiling_and_fast_rates() -> None:
    shown = Shown(done=20_000, total=100_000, rate=19_876.4, concurrency=7)
    # 80,000 runs left at 19,876.4 runs/s: 4.02 s
    assert progress_text(shown) == "20,000/100,000, conc 7, 19,876 runs/s, ETA 00:04"


def test_a_narrow_line_drops_the_least_telling_parts_first() -> None:
    full = progress_text(API_SWEEP)
    assert len(full) == 82
    # the rate goes first, then the concurrency, then the in-flight count
    assert progress_text(API_SWEEP, width=80) == (
        "340/1,000, 18 in flight, 429s 42, conc 18/25, $1.23 of $20, ETA 00:53"
    )
    assert progress_text(API_SWEEP, width=60) == (
        "340/1,000, 18 in flight, 429s 42, $1.23 of $20, ETA 00:53"
    )
    assert progress_text(API_SWEEP, width=45) == "340/1,000, 429s 42, $1.23 of $20, ETA 00:53"
    # never the count, however narrow
    assert progress_text(API_SWEEP, width=5) == "340/1,000"


@pytest.mark.parametrize(
    ("spend", "budget", "text"),
    [
        ({"usd": 1.234, "tokens": 9.0}, {"usd": 20.0}, "$1.23 of $20"),
        ({}, {"usd": 20.5}, "$0.00 of $20.5"),  # a budget with nothing spent yet
        ({"usd": 0.0123}, {}, "$0.012"),  # small sums keep two significant digits
        ({"usd": 1234.5}, {}, "$1,234.50"),
        ({"tokens": 48_213.0}, {}, "48.2k tokens"),  # no usd: the first key reported
        ({"tokens": 2_500_000.0}, {"tokens": 10_000_000.0}, "2.5M tokens of 10M tokens"),
        ({"tokens": 12.0}, {}, "12 tokens"),
        ({}, {}, ""),  # nothing reports a cost: no spend part
    ],
)
def test_spend(spend: dict[str, float], budget: dict[str, float], text: str) -> None:
    assert spend_text(spend, budget) == text


def test_two_budgeted_keys_are_both_shown() -> None:
    shown = Shown(
        done=1, total=2, spend={"usd": 3.0, "tokens": 1500.0}, budget={"usd": 5.0, "tokens": 1e4}
    )
    assert progress_text(shown) == "1/2, $3.00 of $5, 1.5k tokens of 10k tokens"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.4, "00:00"),
        (59.9, "00:59"),
        (61, "01:01"),
        (3599, "59:59"),
        (3600, "1:00:00"),
        (90061, "25:01:01"),
    ],
)
def test_clock(seconds: float, text: str) -> None:
    assert clock_text(seconds) == text
