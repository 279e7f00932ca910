"""The model judge's calls to its endpoint, paced by the project's rate control.

A :class:`JudgeCaller` sends one chat completion per judgment through the real ``openai``
client (the chat runner's :func:`~counterfact.orchestrator.runners.chat.client_for`: no client
retries, a reply size cap) and paces them as the engine paces a runner's API calls:

- every call holds a slot of a
  :class:`~counterfact.orchestrator.engine.pacing.allowance.WorkerSlots` whose limit comes from a
  :class:`~counterfact.orchestrator.engine.pacing.throttle.Throttle` (the adaptive controller: slow
  start, cut when the API is full, grow back on served calls), at most :data:`CONCURRENCY` in
  flight. When the judge calls the runner's own endpoint with the same key (a chat runner's
  ``base_url``: ``blame``'s default judge) and the runs overlap in this process (the in-process
  executor), the judge takes the runs' very slots instead (:attr:`JudgeCaller.shared`): one limit,
  one throttle instance and one ``executor.rate_limit`` bucket for both, so a 429 met by either
  slows both. On Ray the runs' slots live in the worker processes: the judge, in the driver, holds
  a part of the same limit from the same throttle actor, as one more worker does
  (:meth:`~counterfact.orchestrator.engine.executors.ray_pool.ActorPool.judge_slots`). Otherwise it
  has its own throttle: another endpoint's limits are not the runner's;
- an HTTP 429 (:func:`~counterfact.orchestrator.engine.pacing.ratelimits.refusal_of`) gives the slot
  back, tells the throttle, and waits the server's ``Retry-After`` (else exponential backoff
  with full jitter) before the call is sent again, up to ``max_wait_s`` of waiting in all; it
  is not an attempt (:class:`~counterfact.orchestrator.engine.calling.worker.Attempts`, the runner's
  bookkeeping);
- a server error (5xx) or a call past ``timeout_s`` (``comparator.timeout_s``, default
  :data:`CALL_TIMEOUT_S`) is tried again after a jittered backoff, :data:`RETRIES` attempts in
  all.

A call that still has no answer — a refusal (another 4xx, such as a content filter's 400), a
judge that stayed down through its retries, rate limits past the wait allowed — is that
output's failed comparison (:class:`~counterfact.exceptions.JudgeUnavailable`). A judge that
cannot be asked at all — no connection, a rejected key (401), an unknown model or path (404),
an account out of credit — is a :class:`~counterfact.exceptions.ScoringError`: nothing else
would be answered either.
"""

from __future__ import annotations

import asyncio
import os
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

from counterfact.defaults import MAX_RATE_LIMIT_WAIT_S
from counterfact.exceptions import (
    ChatReplyError,
    ConfigError,
    JudgeUnavailable,
    RunnerReturnError,
    ScoringError,
)
from counterfact.orchestrator.engine.calling.worker import Attempts, RetryPolicy
from counterfact.orchestrator.engine.pacing.allowance import WorkerSlots
from counterfact.orchestrator.engine.pacing.ratelimits import out_of_credit, refusal_of
from counterfact.orchestrator.engine.pacing.throttle import Allowance, Throttle
from counterfact.orchestrator.runners.chat import client_for
from counterfact.orchestrator.runners.chatlimits import token_counts, within
from counterfact.orchestrator.runners.redact import redact, redact_exception, secrets_of

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from counterfact.orchestrator.engine.executors.base import SharedSlots, ThrottleRecord

CONCURRENCY = 8
"""Judge calls in flight at once, at most (the throttle's ceiling)."""

RETRIES = 3
"""Attempts of one call on a server error (5xx) or a timeout (a 429 is not an attempt)."""

RETRY_ON = frozenset({"InternalServerError", "APITimeoutError", "ChatReplyError"})
"""The exceptions a call is tried again after: a 5xx, the client's timeout, the deadline."""

CALL_TIMEOUT_S = 60.0
"""How long one judge call may take before it is tried again, by default (the client's default
is 10 minutes: a hung judge would hold the judging that long)."""

CANNOT_ASK = frozenset({401, 404})
"""HTTP statuses that say the judge cannot be asked at all (the key, the model or the path)."""


@dataclass(frozen=True)
class Reply:
    """A judge call's answer: its text (empty when it held none) and what it cost."""

    text: str
    input_tokens: int
    output_tokens: int


class JudgeCaller:
    """One judge endpoint's calls: its client on the judge's event loop, and its throttle."""

    def __init__(
        self,
        model: str,
        base_url: str | None,
        api_key_env: str,
        *,
        concurrency: int = CONCURRENCY,
        max_wait_s: float = MAX_RATE_LIMIT_WAIT_S,
        timeout_s: float = CALL_TIMEOUT_S,
        max_tokens: int | None = None,
    ) -> None:
        self.model = model
        self.max_tokens = max_tokens
        """The reply's token cap (``comparator.max_tokens``), or None to send none."""
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s
        """Seconds one call may take (``comparator.timeout_s``)."""
        self.throttle = Throttle(concurrency)
        """The judge's adaptive limit (its moves are the record's ``concurrency``)."""
        self.policy = RetryPolicy(RETRIES - 1, RETRY_ON, max_wait_s)
        self.rate_limited = 0
        """Calls the judge refused with a 429 (each waited out and sent again)."""
        self.shared: SharedSlots | None = None
        """The runs' slots to pace calls by (set by the judge for each batch), else None: the
        judge's own :attr:`throttle`."""
        self._rng = random.Random()
        self._slots: WorkerSlots | None = None
        self._client: AsyncOpenAI | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def controller(self) -> ThrottleRecord:
        """The throttle its calls report to: the runs' when it shares their slots."""
        return self.shared.throttle if self.shared is not None else self.throttle

    def _open(self) -> tuple[AsyncOpenAI, WorkerSlots]:
        """The client and slots of the running loop (made on its first call); the runs' slots
        (and the process's client for that loop, the runner's to close) when shared.
        """
        if self.shared is not None:
            try:
                return client_for(self.base_url, self.api_key_env), self.shared.slots
            except ConfigError as exc:
                raise ScoringError(str(exc)) from exc
        loop = asyncio.get_running_loop()
        if self._client is None or self._slots is None or self._loop is not loop:
            try:
                client = client_for(self.base_url, self.api_key_env)
            except ConfigError as exc:  # the key went missing since the config was read
                raise ScoringError(str(exc)) from exc
            throttle = self.throttle

            async def link(refused: int, served: int, stale: int) -> Allowance:
                return throttle.report(refused, served, stale)

            start = Allowance(throttle.limit, throttle.per_minute, throttle.epoch)
            self._client, self._slots, self._loop = client, WorkerSlots(link, start), loop
        return self._client, self._slots

    async def ask(self, prompt: str, seed: int) -> Reply:
        """One judgment: ``prompt`` at temperature 0 with ``seed``, paced and retried.

        Raises:
            JudgeUnavailable: the judge refused it, or gave no answer through its retries.
            ScoringError: the judge cannot be asked at all.
        """
        client, slots = self._open()
        secrets = secrets_of([os.environ.get(self.api_key_env)])
        tries = Attempts(self.policy, self._rng)
        # in the body as is: every openai client since 1.30 sends it, none sends a null cap
        cap = None if self.max_tokens is None else {"max_tokens": self.max_tokens}
        while True:
            epoch = await slots.acquire()
            tries.calls += 1
            try:  # a whole-call deadline: the client's own timeout is per read, and drips pass
                reply = await within(
                    client.chat.completions.create(
                        model=self.model,
                        messages=[{"role": "user", "content": prompt}],
                        temperature=0,
                        seed=seed,
                        timeout=self.timeout_s,
                        extra_body=cap,
                    ),
                    self.timeout_s,
                )
            except asyncio.CancelledError:
                slots.release()
                raise
            except Exception as exc:
                redact_exception(exc, secrets)
                refused = refusal_of(exc) is not None
                slots.release(refused=refused, served=not refused, epoch=epoch)
                self.rate_limited += refused
                wait = tries.after(exc)
                if wait is None:
                    raise self._failure(exc, tries) from exc
                await asyncio.sleep(wait)
                continue
            slots.release(served=True, epoch=epoch)
            return _reply(reply, secrets)

    def _failure(self, exc: Exception, tries: Attempts) -> ScoringError:
        """What a call that has no answer means: this output's, or the judge's as a whole."""
        from openai import APIConnectionError, APITimeoutError

        status = getattr(exc, "status_code", None)
        where = self.base_url or os.environ.get("OPENAI_BASE_URL") or "OpenAI's API"
        said = f"{type(exc).__name__}: {str(exc)[:200]}"
        if isinstance(exc, ChatReplyError):  # the deadline, worded for the runner: say ours
            said = (
                f"no complete reply within comparator.timeout_s={self.timeout_s:g} s (the "
                f"default is {CALL_TIMEOUT_S:g}); raise it for a slower judge"
            )
        unreachable = isinstance(exc, APIConnectionError) and not isinstance(exc, APITimeoutError)
        if unreachable or status in CANNOT_ASK or out_of_credit(exc):
            msg = (
                f"the judge {self.model} at {where} could not be asked: {said}; every run is "
                "recorded — fix comparator.base_url / model / api_key_env (or start the judge's "
                "server, or add credit) and resume, which asks only what was not judged"
            )
            return ScoringError(msg)
        how = (
            f"refused it (HTTP {status})"
            if isinstance(status, int) and 400 <= status < 500 and status != 429
            else f"gave no answer after {tries.calls} attempt(s) and {tries.refused} rate-limit "
            f"wait(s) ({tries.waited_s:.0f} s)"
        )
        msg = (
            f"the judge {self.model} at {where} {how}: {said}; that output is unscored (a "
            "resume asks the judge again; a refusal may need comparator.prompt changed)"
        )
        return JudgeUnavailable(msg)

    async def aclose(self) -> None:
        """Close the client (its connections) and forget the slots: the next call opens anew."""
        client, self._client, self._slots, self._loop = self._client, None, None, None
        if client is not None:
            await client.close()


def _reply(reply: object, secrets: tuple[str, ...]) -> Reply:
    """The text and the token counts of a completion (not text, or counts past 1e15: none)."""
    text = ""
    choices = getattr(reply, "choices", None)
    if choices:
        content = choices[0].message.content
        text = content if isinstance(content, str) else ""  # not text: not a verdict
    try:  # the chat runner's checks: wrong types and counts past 1e15 are not trusted
        counts = token_counts(getattr(reply, "usage", None)) or (0, 0, None)
    except RunnerReturnError:
        counts = (0, 0, None)
    return Reply(redact(text, secrets), counts[0], counts[1])
