"""Recognise "slow down" from an API and say how long to wait, without importing any client.

A run is rate-limited when it raises :class:`counterfact.RateLimited`, or an exception that
carries HTTP status 429 the way the usual clients do:

- ``openai.RateLimitError`` / ``anthropic.RateLimitError``: ``exc.status_code`` and
  ``exc.response.headers``;
- ``httpx.HTTPStatusError`` and ``requests.HTTPError``: ``exc.response.status_code`` and
  ``exc.response.headers``;
- ``aiohttp.ClientResponseError``: ``exc.status`` and ``exc.headers``.

The wait is the server's ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), else
an exponential backoff with full jitter (Brooker, "Exponential Backoff And Jitter", AWS
Architecture Blog, 2015): a uniform draw in ``[0, min(cap, base * 2**(n-1))]``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

from counterfact.exceptions import RateLimited

TOO_MANY_REQUESTS = 429
MAX_RETRY_AFTER_S = 300.0
"""A longer ``Retry-After`` is taken as this (a broken header must not park a run for days)."""
BACKOFF_BASE_S = 0.5
"""First backoff ceiling, doubled per retry."""
BACKOFF_CAP_S = 30.0
"""Backoff ceiling."""
MIN_WAIT_S = 0.05
"""The shortest wait after a refusal (``Retry-After: 0`` must not become a busy loop)."""
NOT_RATE_LIMITS = frozenset({"insufficient_quota", "billing_hard_limit_reached"})
"""429 codes that mean "out of credit", not "slow down": ordinary errors, never waited on."""


@dataclass(frozen=True)
class Refusal:
    """A run the API refused for now."""

    retry_after: float | None
    """Seconds the server asked to wait; None when it did not say."""


def _status(exc: BaseException) -> object:
    for holder in (exc, getattr(exc, "response", None)):
        if holder is None:
            continue
        for name in ("status_code", "status"):
            value = getattr(holder, name, None)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


def _headers(exc: BaseException) -> Any:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        headers = getattr(exc, "headers", None)
    return headers if isinstance(headers, Mapping) or hasattr(headers, "get") else None


def parse_retry_after(headers: Any, now: datetime | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    try:
        millis = headers.get("retry-after-ms")
        raw = headers.get("retry-after") or headers.get("Retry-After")
    except Exception:  # a headers object that cannot be read is no hint
        return None
    try:
        if millis is not None:
            return _clamp(float(millis) / 1000.0)
        if raw is None:
            return None
        return _clamp(float(raw))
    except (TypeError, ValueError):
        pass
    try:
        when = parsedate_to_datetime(str(raw))
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return _clamp((when - (now or datetime.now(timezone.utc))).total_seconds())


def _clamp(seconds: float) -> float | None:
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


def refusal_of(exc: BaseException) -> Refusal | None:
    """The rate limit ``exc`` reports (or the exception it was raised from, for wrappers such
    as tenacity's or an agent framework's), or None when it is an ordinary error.
    """
    seen: BaseException | None = exc
    for _ in range(4):
        if seen is None:
            return None
        if isinstance(seen, RateLimited):
            hint = seen.retry_after
            return Refusal(None if hint is None else _clamp(float(hint)))
        if _status(seen) == TOO_MANY_REQUESTS:  # the first 429 in the chain decides: an
            # out-of-credit openai error is raised while handling httpx's plain 429 for it
            if out_of_credit(seen):
                return None
            return Refusal(parse_retry_after(_headers(seen)))
        seen = seen.__cause__ or seen.__context__
    return None


def out_of_credit(exc: BaseException) -> bool:
    """A 429 whose OpenAI-style ``code`` or ``type`` says the account is out of credit
    (``insufficient_quota``): no wait helps, so it is an ordinary error.
    """
    return bool(_codes(exc) & NOT_RATE_LIMITS)


def _codes(exc: BaseException) -> set[object]:
    """OpenAI-style error ``code`` and ``type`` (``exc.code``/``exc.type``, else
    ``exc.body['error']``).
    """
    found = {getattr(exc, "code", None), getattr(exc, "type", None)}
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            found |= {inner.get("code"), inner.get("type")}
    return {c for c in found if isinstance(c, str)}


def full_jitter(
    attempt: int,
    rng: random.Random,
    *,
    base: float = BACKOFF_BASE_S,
    cap: float = BACKOFF_CAP_S,
) -> float:
    """Seconds to wait before retry number ``attempt`` (1, 2, ...): uniform in
    ``[0, min(cap, base * 2**(attempt-1))]``.
    """
    ceiling = min(cap, base * 2.0 ** max(attempt - 1, 0))
    return rng.uniform(0.0, ceiling)


def wait_for(refusal: Refusal, times: int, rng: random.Random) -> float:
    """How long a refused run waits: the server's hint, else backoff number ``times``; at
    least :data:`MIN_WAIT_S`.
    """
    if refusal.retry_after is not None:
        return max(refusal.retry_after, MIN_WAIT_S)
    return max(full_jitter(times, rng), MIN_WAIT_S)
