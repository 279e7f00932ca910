"""The built-in chat runner: one chat completion per run through the real ``openai`` client.

``runner: {kind: chat, ...}``
(:class:`~counterfact.orchestrator.runners.chatconfig.ChatRunnerConfig`) resolves to a
:class:`ChatRunner`, an ``async`` callable the engine awaits like any async
runner (so an in-process sweep by default). Each worker process keeps one ``AsyncOpenAI``
client per endpoint and event loop: its connection pool serves every run there. The client's
own retries are off (``max_retries=0``): a 429 reaches the engine as ``openai.RateLimitError``,
which waits out its ``Retry-After``, lowers the sweep's concurrency and never counts the run as
failed; a 429 that says the account is out of credit (``insufficient_quota``) fails the run in
the server's words. Each request has a deadline and a reply size cap
(:mod:`~counterfact.orchestrator.runners.chatlimits`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from counterfact.exceptions import ChatReplyError, ConfigError, RunnerReturnError
from counterfact.orchestrator.runners.chatconfig import DEFAULT_MAX_REPLY_BYTES, ChatRunnerConfig
from counterfact.orchestrator.runners.chatlimits import (
    ASKED_ENCODING,
    capped_http_client,
    out_of_credit,
    own_error,
    token_counts,
    within,
)
from counterfact.orchestrator.runners.chatparts import sent_parts
from counterfact.orchestrator.runners.chatplan import plan_for, run_cost
from counterfact.orchestrator.runners.redact import (
    redact,
    redact_data,
    redact_exception,
    secrets_of,
)
from counterfact.probes.runner import RunContext, RunResult

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from openai.types.chat import ChatCompletion, ChatCompletionMessageParam

PROTOCOL = 1
"""The request format's version, part of the runner's identity: bump it when the same config
would send a different request (cached and recorded runs then no longer stand for it)."""

_CLIENTS_LOCK = threading.Lock()
"""Guards :data:`_CLIENTS`: blame's calls run on event loops in several threads."""
_CLIENTS: dict[tuple[str | None, str, int, int], tuple[asyncio.AbstractEventLoop, AsyncOpenAI]] = {}


def client_for(
    base_url: str | None, key_env: str, max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES
) -> AsyncOpenAI:
    """The process's client for this endpoint and reply cap on the running event loop (made on
    first use).

    Raises:
        ConfigError: the key's environment variable is not set in this process (a cluster node
            the driver's environment did not reach).
    """
    from openai import AsyncOpenAI

    api_key = os.environ.get(key_env, "")
    if not api_key:
        msg = (
            f"environment variable {key_env} is not set in this worker process; set it where "
            "the runs execute (any text, e.g. 'none', for a server that takes no key)"
        )
        raise ConfigError(msg, field="runner.api_key_env")
    loop = asyncio.get_running_loop()
    key = (
        base_url,
        api_key,
        id(loop),
        max_reply_bytes,
    )  # loops in several threads (blame's calls) each own one
    with _CLIENTS_LOCK:
        held = _CLIENTS.get(key)
        if held is None:
            for gone in [k for k, (other, _) in _CLIENTS.items() if other.is_closed()]:
                del _CLIENTS[gone]  # a finished loop's client is never used again
        if held is None or held[0] is not loop:
            client = AsyncOpenAI(
                base_url=base_url,
                api_key=api_key,
                max_retries=0,
                http_client=capped_http_client(max_reply_bytes),
                default_headers=ASKED_ENCODING,
            )
            held = _CLIENTS[key] = (loop, client)
        return held[1]


@dataclass(frozen=True)
class ChatRunner:
    """``runner: {kind: chat}`` resolved: picklable, shipped to every worker as it is."""

    config: ChatRunnerConfig
    base_url: str | None
    """The endpoint, fixed in the driver: ``runner.base_url``, else ``OPENAI_BASE_URL`` there,
    else None (OpenAI's own)."""

    @property
    def api_key_env(self) -> str:
        """The environment variable its key is read from (``runner.api_key_env``)."""
        return self.config.api_key_env

    async def __call__(self, ctx: RunContext) -> RunResult:
        """One chat completion for this scenario, arm and seed."""
        plan = plan_for(self.config, ctx.arm.facets)
        messages, body = plan.request(ctx.scenario.inputs)
        passages = plan.passages(ctx.scenario.inputs)
        arm = ctx.arm
        sent, parts = sent_parts(messages, plan.level, arm.ablations, arm.restorations, passages)
        model = str(body.pop("model"))
        if self.config.send_seed:
            body["seed"] = ctx.seed
        config = self.config
        client = client_for(self.base_url, config.api_key_env, config.max_reply_bytes)
        secrets = secrets_of([os.environ.get(config.api_key_env)])
        try:
            call = client.chat.completions.create(
                model=model,
                messages=cast("list[ChatCompletionMessageParam]", sent),
                extra_body=body,
                timeout=float(config.timeout_s),
            )
            reply = await within(call, float(config.timeout_s))
        except Exception as exc:  # the server's error text is stored: never with the key in it
            redact_exception(exc, secrets)
            _raise_own(exc)
            raise
        if not hasattr(reply, "choices"):  # a 200 whose body is not JSON: the client's text
            shown = redact(" ".join(str(reply).split())[:200], secrets)
            msg = f"the API's reply is not a chat completion (not JSON?): {shown!r}"
            raise RunnerReturnError(msg)
        manifest = plan.manifest(reply.model or None) | {"parts": parts}
        return self._result(reply, redact_data(manifest, secrets), secrets)

    def _result(
        self, reply: ChatCompletion, manifest: dict[str, Any], secrets: tuple[str, ...]
    ) -> RunResult:
        if not reply.choices:
            shown = redact(repr(reply.id), secrets)
            msg = f"the API's reply (id {shown}) holds no choices, so there is no answer"
            raise RunnerReturnError(msg)
        counts = token_counts(reply.usage)
        cost = None if counts is None else run_cost(*counts, self.config.price)
        output: object = reply.choices[0].message.content or ""  # unvalidated: any JSON
        if not isinstance(output, str):
            shown = redact(repr(output)[:60], secrets)
            msg = (
                f"the API's reply is malformed: choices[0].message.content is "
                f"{type(output).__name__} {shown}, not text"
            )
            raise RunnerReturnError(msg)
        return RunResult(output=redact(output, secrets), manifest=manifest, cost=cost)

    def identity(self, version: str | None = None) -> str:
        """``chat@version:<v>`` with ``runner_version``, else ``chat@sha256:<16 hex>`` of the
        runner's settings, the endpoint and :data:`PROTOCOL`: an edited prompt, model or price
        is a changed runner (a resume refuses it; the run cache does not serve the old runs).
        """
        if version is not None:
            return f"chat@version:{version}"
        settings = self.config.model_dump(mode="json")
        for key, default in (("call", None), ("parts", "paragraphs")):
            if settings[key] == default:  # new settings at their defaults: the same identity
                del settings[key]
        for key in ("timeout_s", "max_reply_bytes"):  # bounds on a call, not what it asks: a
            del settings[key]  # resume may raise them to finish the runs they failed
        payload = {"protocol": PROTOCOL, "config": settings, "base_url": self.base_url}
        text = json.dumps(payload, sort_keys=True, ensure_ascii=False)
        return f"chat@sha256:{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def _raise_own(exc: Exception) -> None:
    """Raise what ``exc`` means in this runner's words, if it is one of its own cases: the reply
    cap (raised inside the ``openai`` client, which wraps it as a connection error) or a 429
    saying the account is out of credit (not a rate limit: no wait helps).
    """
    own = own_error(exc)
    if own is not None:
        raise ChatReplyError(str(own)) from None
    said = out_of_credit(exc)
    if said is not None:
        msg = (
            f"the API refused the request for want of credit (HTTP 429 insufficient_quota), "
            f"which no wait helps: {said!r}; add credit to the account, or point "
            "runner.api_key_env at another key"
        )
        raise ChatReplyError(msg) from None
