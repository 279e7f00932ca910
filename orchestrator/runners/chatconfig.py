"""``runner: {kind: chat, ...}``: a prompt experiment declared in the sweep file, no Python.

One chat completion per run, through the ``openai`` client, against any OpenAI-compatible
endpoint (a hosted API, vLLM, Ollama). Part of the schema
(the schema's ``SweepConfig`` holds it); the runner itself is
:mod:`counterfact.orchestrator.runners.chat`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    field_validator,
    model_validator,
)

from counterfact.orchestrator.runners.chatparts import Level
from counterfact.orchestrator.runners.templates import template_fields


class _Model(BaseModel):
    # the sweep file's model settings (orchestrator/config/model.py), restated: the runner's own
    # section lives below the config package, which imports it, so it cannot import that base
    model_config = ConfigDict(
        extra="forbid", frozen=True, arbitrary_types_allowed=True, use_attribute_docstrings=True
    )


TEMPLATES = ("system", "messages", "prompt")
"""Facets that are message templates; every other facet is a request field."""
RUNNER_ONLY = (
    "kind",
    "base_url",
    "api_key_env",
    "price",
    "send_seed",
    "request",
    "call",
    "parts",
    "timeout_s",
    "max_reply_bytes",
)
"""Settings of the runner itself: an arm cannot vary them (a facet of that name is refused)."""
DEFAULT_TIMEOUT_S = 120.0
"""Seconds a chat request may take in all, when ``runner.timeout_s`` is not set."""
DEFAULT_MAX_REPLY_BYTES = 8 << 20
"""Bytes a reply's body may hold (8 MiB), when ``runner.max_reply_bytes`` is not set."""
SENT_BY_COUNTERFACT = ("messages", "seed", "stream", "model")
"""Request fields ``runner.request`` may not set: counterfact builds them (``model`` has its own
key)."""
CALL_FIELDS_DROPPED = ("messages", "seed", "stream", "stream_options", "n", "model")
"""Fields of a recorded request (``call``) not sent as they are: counterfact sends the messages
(with parts removed), the model, each run's seed, and one whole reply."""


class ChatPrice(_Model):
    """USD per 1,000 tokens, for the ``usd`` cost of each run."""

    input_per_1k: StrictFloat | StrictInt = Field(ge=0, allow_inf_nan=False)
    """Per 1,000 input (prompt) tokens."""
    output_per_1k: StrictFloat | StrictInt = Field(ge=0, allow_inf_nan=False)
    """Per 1,000 output (completion) tokens."""


class ChatMessage(_Model):
    """One message of the conversation before the prompt (a few-shot example, say)."""

    role: Literal["system", "developer", "user", "assistant"]
    content: StrictStr
    """A template over the scenario's inputs, like ``prompt``."""

    @field_validator("content")
    @classmethod
    def _template(cls, value: str) -> str:
        template_fields(value)
        return value


class ChatRunnerConfig(_Model):
    """``runner: {kind: chat, prompt: "...{question}..."}``: one chat completion per run.

    The request is ``system``, then ``messages``, then ``prompt`` as the user's message, each
    filled from the scenario's ``inputs``; arms vary any of it through facets of the same names
    (``model``, ``temperature``, ``system``, ``prompt``, ``max_tokens``, ``messages``), and any
    other facet is sent as a request field (``top_p``, ``stop``, ``response_format`` ...). See
    docs/how-to/chat-runner.md.
    """

    kind: Literal["chat"]
    """``chat``: the built-in chat runner (a mapping under ``runner:`` is always a built-in)."""
    prompt: StrictStr | None = None
    """The user's message, a ``str.format`` template over the scenario's inputs
    (``"Answer in one word: {question}"``); a field the scenarios lack is refused before any
    run. Required unless ``messages`` is given."""
    system: StrictStr | None = None
    """The system message, a template like ``prompt``; none when left out."""
    messages: list[ChatMessage] = Field(default_factory=list)
    """Messages sent between ``system`` and ``prompt`` (few-shot examples), each
    ``{role, content}`` with ``content`` a template."""
    model: StrictStr | None = None
    """The model asked for, unless an arm's ``model`` facet names another; every arm must end
    up with one."""
    temperature: StrictFloat | StrictInt | None = Field(default=None, ge=0, allow_inf_nan=False)
    """Sampling temperature; the server's default when left out."""
    max_tokens: StrictInt | None = Field(default=None, ge=1)
    """The most tokens to generate; the server's default when left out."""
    request: dict[StrictStr, Any] = Field(default_factory=dict)
    """Other request fields, sent as they are (``top_p``, ``stop``, ``max_completion_tokens``,
    ``response_format`` ...); an arm's facet of the same name overrides one."""
    price: ChatPrice | None = None
    """USD per 1,000 input and output tokens: each run's cost gets ``usd`` from its usage."""
    base_url: StrictStr | None = None
    """The endpoint, e.g. ``http://localhost:8000/v1`` (vLLM) or ``http://localhost:11434/v1``
    (Ollama); default ``OPENAI_BASE_URL``, else OpenAI's."""
    api_key_env: StrictStr = Field(default="OPENAI_API_KEY", min_length=1)
    """The environment variable holding the API key; it must be set before a run (any text,
    such as ``none``, for a server that takes no key)."""
    call: StrictStr | None = None
    """The scenario input that holds a whole recorded request body (``{"model", "messages",
    ...}``, as ``counterfact record`` saves it): its messages are sent as they are, with no
    templates, and its model and request fields are used unless the runner or an arm sets
    them. Instead of ``prompt``, ``system`` and ``messages``. ``counterfact blame`` uses it."""
    parts: Level = "paragraphs"
    """How the messages sent are cut into the parts an arm's ``ablations`` may remove:
    ``messages`` (``m0``, ``m1`` ...), ``paragraphs`` (``m1.p0`` ..., split on blank lines) or
    ``sentences`` (``m1.s0`` ...); each run's manifest lists the parts it sent under ``parts``."""
    timeout_s: StrictFloat | StrictInt = Field(
        default=DEFAULT_TIMEOUT_S, gt=0, le=86_400, allow_inf_nan=False
    )
    """Seconds each request may take from sending to the reply's last byte (120 by default):
    a reply still arriving then is cut off and the run fails (``ChatReplyError``), however
    steadily its bytes trickle in. The executor's ``timeout_s``, if set, bounds the whole run
    as well."""
    max_reply_bytes: StrictInt = Field(default=DEFAULT_MAX_REPLY_BYTES, ge=1024, le=1 << 30)
    """The most bytes a reply's body may hold (8 MiB, 8388608, by default): a longer reply is
    not read past the cap and the run fails (``ChatReplyError``) naming the size. It bounds
    the answer stored in ``runs.jsonl`` as well. Replies are asked for uncompressed."""
    send_seed: StrictBool = True
    """Send each run's seed as the request's ``seed``; false for an API that refuses the field.
    Without a seed the reruns are not paired by seed: declare ``statistics.pairing: none``."""

    @field_validator("prompt", "system")
    @classmethod
    def _template(cls, value: str | None) -> str | None:
        if value is not None:
            template_fields(value)
        return value

    @field_validator("request")
    @classmethod
    def _own_fields(cls, value: dict[str, Any]) -> dict[str, Any]:
        for key in value:
            if key in SENT_BY_COUNTERFACT:
                msg = (
                    f"request.{key} is set by counterfact ({_why(key)}); remove it from "
                    "runner.request"
                )
                raise ValueError(msg)
            if key in ("temperature", "max_tokens", *TEMPLATES):
                msg = f"request.{key} has its own key; write runner.{key} instead"
                raise ValueError(msg)
        return value

    @model_validator(mode="after")
    def _something_to_send(self) -> ChatRunnerConfig:
        if self.call is not None:
            if self.prompt is not None or self.system is not None or self.messages:
                msg = (
                    "a chat runner with 'call' sends the recorded request's own messages; "
                    "remove prompt, system and messages"
                )
                raise ValueError(msg)
            return self
        if self.prompt is None and not self.messages:
            msg = (
                "a chat runner needs a 'prompt' (the user's message, e.g. "
                "'Answer in one word: {question}') or 'messages'"
            )
            raise ValueError(msg)
        return self


def _why(key: str) -> str:
    return {
        "messages": "from system, messages and prompt",
        "seed": "each run's seed; send_seed: false leaves it out",
        "stream": "one whole reply per run",
        "model": "write runner.model, or an arm's model facet",
    }[key]
