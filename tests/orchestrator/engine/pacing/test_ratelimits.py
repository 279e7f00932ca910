"""Recognising 429s from real clients, Retry-After and backoff (the throttle: test_throttle.py)."""

from __future__ import annotations

import asyncio
import random
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import httpx
import openai
import pytest

from counterfact import RateLimited
from counterfact.orchestrator.engine.pacing.ratelimits import (
    full_jitter,
    parse_retry_after,
    refusal_of,
)
from tests.echo_server import echo_server
from tests.standin import StandIn


def test_httpx_429_from_a_real_server_is_a_refusal_with_its_retry_after() -> None:
    with StandIn(median_s=0.3, p95_s=0.4, max_in_flight=0, retry_after=2.5) as api:
        response = httpx.post(f"{api.base_url}/chat/completions", json={"model": "m"})
        with pytest.raises(httpx.HTTPStatusError) as caught:
            response.raise_for_status()
    found = refusal_of(caught.value)
    assert found is not None and found.retry_after == 2.5


def test_openai_rate_limit_error_from_the_real_client_is_a_refusal() -> None:
    with StandIn(max_in_flight=0, retry_after=0.75) as api:
        client = openai.OpenAI(base_url=api.base_url, api_key="none", max_retries=0)
        with pytest.raises(openai.RateLimitError) as caught:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
    found = refusal_of(caught.value)
    assert found is not None and found.retry_after == 0.75


def test_other_http_errors_and_plain_errors_are_not_refusals() -> None:
    request = httpx.Request("GET", "http://127.0.0.1/")
    server_error = httpx.HTTPStatusError(
        "boom", request=request, response=httpx.Response(500, request=request)
    )
    assert refusal_of(server_error) is None
    assert refusal_of(ValueError("429")) is None


def test_rate_limited_exception_carries_its_hint_or_none() -> None:
    assert refusal_of(RateLimited(retry_after=3)) is not None
    assert refusal_of(RateLimited(retry_after=3)).retry_after == 3.0  # type: ignore[union-attr]
    assert refusal_of(RateLimited()).retry_after is None  # type: ignore[union-attr]


def test_retry_after_forms() -> None:
    now = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
    when = format_datetime(now + timedelta(seconds=7), usegmt=True)
    assert parse_retry_after(httpx.Headers({"Retry-After": when}), now) == 7.0
    assert parse_retry_after(httpx.Headers({"retry-after-ms": "250"})) == 0.25
    assert parse_retry_after(httpx.Headers({"Retry-After": "1e9"})) == 300.0  # clamped
    assert parse_retry_after(httpx.Headers({"Retry-After": "soon"})) is None
    assert parse_retry_after(httpx.Headers({})) is None


def test_full_jitter_stays_under_its_doubling_ceiling() -> None:
    rng = random.Random(1)
    for attempt, ceiling in [(1, 0.5), (2, 1.0), (3, 2.0), (10, 30.0)]:
        draws = [full_jitter(attempt, rng) for _ in range(2000)]
        assert min(draws) >= 0.0 and max(draws) <= ceiling
        # uniform on [0, ceiling]: the mean of 2,000 draws is within 5% of ceiling / 2
        assert abs(sum(draws) / len(draws) - ceiling / 2) < 0.05 * ceiling


def test_a_zero_retry_after_still_waits_a_little() -> None:
    from counterfact.orchestrator.engine.pacing.ratelimits import MIN_WAIT_S, Refusal, wait_for

    assert wait_for(Refusal(0.0), 1, random.Random(0)) == MIN_WAIT_S


def test_out_of_credit_429_is_an_ordinary_error() -> None:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx.Response(429, request=request, json={"error": {"code": "insufficient_quota"}})
    quota = openai.RateLimitError(
        "quota", response=response, body={"error": {"code": "insufficient_quota"}}
    )
    assert refusal_of(quota) is None


def test_out_of_credit_429_from_the_real_openai_client_is_an_ordinary_error() -> None:
    # issue 39: the openai client raises its RateLimitError while handling httpx's plain 429;
    # refusal_of walked on to that __context__, found a 429 without a code, and the run waited
    # for ever. The first 429 in the chain decides.
    async def call(root: str) -> BaseException:
        client = openai.AsyncOpenAI(base_url=f"{root}quota/v1", api_key="none", max_retries=0)
        try:
            await client.chat.completions.create(model="m", messages=[])
        except openai.RateLimitError as exc:
            return exc
        raise AssertionError("the server answered")

    with echo_server() as root:
        quota = asyncio.run(call(root))
    assert quota.__context__ is not None  # httpx's own 429, which names no code
    assert refusal_of(quota) is None


def test_a_429_wrapped_by_another_exception_is_found_through_its_cause() -> None:
    try:
        try:
            raise RateLimited(retry_after=2)
        except RateLimited as inner:
            raise RuntimeError("agent step failed") from inner
    except RuntimeError as outer:
        found = refusal_of(outer)
    assert found is not None and found.retry_after == 2.0
