"""The built-in chat runner: one chat completion per run through the real ``openai`` client.

``runner: {kind: chat, ...}``
(:class:`~counterfact.orchestrator.runners.chatconfig.ChatRunnerConfig`) resolves to a
:class:`ChatRunner`, an ``async`` callable the engine awaits like any async
runner (so an in-process sweep by default). Each worker process keeps one ``AsyncOpenAI``
client per endpoint and event loop: its connection pool serves every run there. The client's
own retries are off (``max_retries=0``): a 429 reaches the engine as ``openai.RateLimitError``,
which waits out its ``Retry-After``, lowers the sweep's concurrency and never counts the run as
failed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from counterfact.exceptions import ConfigError, RunnerReturnError
from counterfact.orchestrator.runners.chatconfig import ChatRunnerConfig
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
_CLIENTS: dict[tuple[str | None, str, int], tuple[asyncio.AbstractEventLoop, AsyncOpenAI]] = {}


def client_for(base_url: str | None, key_env: str) -> AsyncOpenAI:
    """The process's client for this endpoint on the running event loop (made on first use).

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
    key = (base_url, api_key, id(loop))  # loops in several threads (blame's calls) each own one
    with _CLIENTS_LOCK:
        held = _CLIENTS.get(key)
        if held is None:
            for gone in [k for k, (other, _) in _CLIENTS.items() if other.is_closed()]:
                del _CLIENTS[gone]  # a finished loop's client is never used again
        if held is None or held[0] is not loop:
            client = AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0)
            held = _CLIENTS[key] = (loop, client)
        return held[1]


@dataclass(frozen=True)
class ChatRunner:
    """``runner: {kind: chat}`` resolved: picklable, shipped to every worker as it is."""

    config: ChatRunnerConfig
    base_url: str | None
    """The endpoint, fixed in the driver: ``runner.base_url``, else ``OPENAI_BASE_URL`` there,
    else None (OpenAI's own)."""

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
        client = client_for(self.base_url, self.config.api_key_env)
        secrets = secrets_of([os.environ.get(self.config.api_key_env)])
        try:
            reply = await client.chat.completions.create(
                model=model,
                messages=cast("list[ChatCompletionMessageParam]", sent),
                extra_body=body,
            )
        except Exception as exc:  # the server's error text is stored: never with the key in it
            redact_exception(exc, secrets)
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
        usage = reply.usage
        cost = None
        if usage is not None:
            cost = run_cost(
                usage.prompt_tokens or 0,
                usage.completion_tokens or 0,
                usage.total_tokens,
                self.config.price,
            )
        output = reply.choices[0].message.content or ""
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
        payload = {"protocol": PROTOCOL, "config": settings, "base_url": self.base_url}
        text = json.dumps(payload, sort_keys=True, ensure_ascii=False)
        return f"chat@sha256:{hashlib.sha256(text.encode()).hexdigest()[:16]}"
