"""What one chat request may cost the process: a deadline and a size cap, and a reply's usage
read without trusting its types.

- The deadline (``runner.timeout_s``) covers the whole request, from sending to the reply's last
  byte: httpx's read timeout is per chunk, so a server dripping one byte a second never trips it.
- The size cap (``runner.max_reply_bytes``) is enforced while the body streams in, through an
  httpx response hook: a ``Content-Length`` past the cap is refused before any of the body is
  read, and a body that grows past it is cut off there (nothing past the cap is held). Replies are
  asked for uncompressed (``Accept-Encoding: identity``) and a compressed one is refused, so the
  bytes counted are the bytes held (a small gzip body can inflate a thousandfold).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from counterfact.exceptions import ChatReplyError, RunnerReturnError
from counterfact.records.runs import MAX_RUN_COST

T = TypeVar("T")

USAGE_FIELDS = ("prompt_tokens", "completion_tokens", "total_tokens")
"""The token counts of a reply's ``usage`` counterfact reads."""
OUT_OF_CREDIT = frozenset({"insufficient_quota", "billing_hard_limit_reached"})
"""OpenAI's 429 codes for "out of credit", not "slow down" (the engine's ``NOT_RATE_LIMITS``
says the same for any client's 429)."""
ASKED_ENCODING = {"Accept-Encoding": "identity"}
"""Sent with every request: the size counted is the size held."""


def too_large(cap: int, size: str) -> str:
    """The one line for a reply past ``cap`` bytes (``size`` says how far it got)."""
    return (
        f"the API's reply is larger than runner.max_reply_bytes={cap:,} bytes ({size}) and was "
        "not read further; raise runner.max_reply_bytes if such replies are expected"
    )


def capped_http_client(cap: int) -> Any:
    """An HTTP client for the ``openai`` client (its usual settings) whose responses may not
    hold more than ``cap`` bytes of body.
    """
    from openai import DefaultAsyncHttpxClient

    async def check(response: Any) -> None:
        # runs before the body is read; raising here closes the response unread
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            msg = (
                f"the API sent its reply compressed ({encoding}) though asked for it "
                "uncompressed (Accept-Encoding: identity); its size could not be bounded"
            )
            raise ChatReplyError(msg)
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            raise ChatReplyError(too_large(cap, f"it declares {int(declared):,} bytes"))
        response.stream = _capped_type(type(response))(response.stream, cap)

    return DefaultAsyncHttpxClient(event_hooks={"response": [check]})


_CAPPED: dict[type, type] = {}
"""The capped stream class made for each HTTP library's response class."""


def _capped_type(response_type: type) -> type:
    """A body stream that raises :class:`ChatReplyError` past its cap, made a subclass of the
    ``AsyncByteStream`` of the HTTP library ``response_type`` comes from (the response reads
    only those): ``httpx`` under ``openai`` 1.x, ``httpx2`` under later versions.
    """
    made = _CAPPED.get(response_type)
    if made is not None:
        return made
    library = sys.modules[response_type.__module__.partition(".")[0]]
    base: type = library.AsyncByteStream

    class Capped(base):  # type: ignore[misc]
        def __init__(self, inner: Any, cap: int) -> None:
            self._inner = inner
            self._cap = cap

        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            async for chunk in self._inner:
                seen += len(chunk)
                if seen > self._cap:  # the same words each time: the failure watch compares
                    raise ChatReplyError(too_large(self._cap, "its length undeclared"))
                yield chunk

        async def aclose(self) -> None:
            await self._inner.aclose()

    _CAPPED[response_type] = Capped
    return Capped


def out_of_credit(exc: BaseException) -> str | None:
    """The server's message when ``exc`` is the ``openai`` client's HTTP 429 whose ``code`` or
    ``type`` says the account is out of credit, else None.
    """
    if getattr(exc, "status_code", None) != 429:
        return None
    codes = {getattr(exc, "code", None), getattr(exc, "type", None)}
    if not codes & OUT_OF_CREDIT:
        return None
    body = getattr(exc, "body", None)
    said = body.get("message") if isinstance(body, Mapping) else None
    return said if isinstance(said, str) else str(exc)


def own_error(exc: BaseException) -> ChatReplyError | None:
    """The :class:`ChatReplyError` the response hook raised, which the ``openai`` client wraps
    as a connection error, or None.
    """
    seen: BaseException | None = exc
    for _ in range(4):
        if seen is None or isinstance(seen, ChatReplyError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


async def within(call: Awaitable[T], timeout_s: float) -> T:
    """``call``'s result, or :class:`ChatReplyError` when it has not finished within
    ``timeout_s`` seconds (the call is then cancelled). A ``TimeoutError`` of the call's own
    stays its own.
    """
    task = asyncio.ensure_future(call)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout_s)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if not done:
        task.cancel()
        msg = (
            f"no complete reply within runner.timeout_s={timeout_s:g} s (the default is 120); "
            "the request was cut off. Raise runner.timeout_s for a slower server"
        )
        raise ChatReplyError(msg)
    return task.result()


def _kind(value: object) -> str:
    """``a string 'abc'``, ``a list [1]``: how a wrong value is named in an error."""
    names = {str: "a string", list: "a list", dict: "an object", float: "a fraction"}
    name = names.get(type(value), "a boolean" if isinstance(value, bool) else type(value).__name__)
    if type(value) is int:
        name = "a negative number"
    shown = repr(value)
    return f"{name} {shown[:60] + '...' if len(shown) > 60 else shown}"


def token_counts(usage: object) -> tuple[int, int, int | None] | None:
    """``(prompt_tokens, completion_tokens, total_tokens)`` of a reply's ``usage`` (a count it
    leaves out is 0, the total None), or None without usage.

    Raises:
        RunnerReturnError: ``usage`` is not an object, or a count is not a whole number of
            tokens, naming the field and what the server sent.
    """
    if usage is None:
        return None
    if isinstance(usage, Mapping):
        get: Any = usage.get
    elif isinstance(usage, BaseModel):  # the openai client's CompletionUsage, unvalidated
        get = lambda name: getattr(usage, name, None)  # noqa: E731
    else:
        msg = f"the API's reply is malformed: usage is {_kind(usage)}, not an object of counts"
        raise RunnerReturnError(msg)
    counts: list[int | None] = []
    for name in USAGE_FIELDS:
        value = get(name)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 0
        ):
            msg = (
                f"the API's reply is malformed: usage.{name} is {_kind(value)}, not a whole "
                "number of tokens (the run's cost cannot be counted)"
            )
            raise RunnerReturnError(msg)
        if value is not None and value > MAX_RUN_COST:  # float() overflows, or poisons a total
            msg = (
                f"the API's reply is malformed: usage.{name} is a {len(str(value))}-digit number "
                f"of tokens, more than {MAX_RUN_COST:.0e} for one reply (the run's cost cannot "
                "be counted)"
            )
            raise RunnerReturnError(msg)
        counts.append(value)
    return counts[0] or 0, counts[1] or 0, counts[2]
