"""Keeping an API key out of what is stored: a server may echo the key it was sent (in a reply,
a model name, an error body), and every such text ends up in ``runs.jsonl``, ``summary.json``,
``report.html`` or a recorded call.

Only values at least :data:`MIN_SECRET` characters long are redacted: shorter ones (``none``,
``x``) are placeholders a local server takes, and replacing them would mangle ordinary text.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

MIN_SECRET = 8
"""Shorter key values are placeholders, not secrets: not redacted."""

REDACTED = "[redacted API key]"
"""What a key's value is replaced with."""


def secrets_of(values: Iterable[str | None]) -> tuple[str, ...]:
    """The values worth redacting (long enough to be a key), longest first."""
    kept = {v for v in values if v and len(v) >= MIN_SECRET}
    return tuple(sorted(kept, key=len, reverse=True))


def redact(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with every secret's value replaced by :data:`REDACTED`."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact_data(data: Any, secrets: tuple[str, ...]) -> Any:
    """JSON-like ``data`` (dicts, lists, strings) with every string redacted, keys included."""
    if not secrets:
        return data
    if isinstance(data, str):
        return redact(data, secrets)
    if isinstance(data, dict):
        return {redact_data(k, secrets): redact_data(v, secrets) for k, v in data.items()}
    if isinstance(data, list):
        return [redact_data(v, secrets) for v in data]
    return data


def redact_exception(exc: BaseException, secrets: tuple[str, ...]) -> None:
    """Redact ``exc``'s message in place, keeping its type (the engine reads a rate limit by its
    class): its ``args`` (what ``str(exc)`` and a traceback print), and the ``message`` and
    ``body`` the openai client's errors carry (the server's error text).
    """
    if not secrets:
        return
    exc.args = tuple(redact_data(a, secrets) for a in exc.args)
    for name in ("message", "body"):
        value = getattr(exc, name, None)
        if isinstance(value, str | dict | list):
            try:
                setattr(exc, name, redact_data(value, secrets))
            except AttributeError:  # a read-only property: args already carry the text
                continue
