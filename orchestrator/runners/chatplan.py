"""The request one arm of a chat sweep makes, and what a reply to it reports.

An arm's facets override the runner's settings key by key: ``system``, ``messages`` and
``prompt`` are templates (``system: null`` sends no system message), ``model`` the model asked
for, and every other facet a request field sent as it is (``temperature``, ``max_tokens``,
``top_p``, ``response_format`` ...). The seed is each run's own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from counterfact.orchestrator.runners.chatconfig import (
    CALL_FIELDS_DROPPED,
    TEMPLATES,
    ChatMessage,
    ChatPrice,
    ChatRunnerConfig,
)
from counterfact.orchestrator.runners.chatcontext import (
    INPUT,
    PLACEHOLDER,
    Passage,
    names_passages,
    passages_of,
)
from counterfact.orchestrator.runners.chatparts import Level
from counterfact.orchestrator.runners.templates import render, template_fields

_MESSAGES: TypeAdapter[list[ChatMessage]] = TypeAdapter(list[ChatMessage])

_SNAPSHOT = re.compile(r"-\d{4}-\d{2}-\d{2}|-\d{8}|-\d{4}|:latest")
"""What an API appends to the model asked for when it names the snapshot it served
(``gpt-4o`` -> ``gpt-4o-2024-08-06``, ``claude-3-5-sonnet`` -> ``...-20241022``,
``gpt-4`` -> ``gpt-4-0613``, ``llama3.2`` -> ``llama3.2:latest``)."""


@dataclass(frozen=True)
class ChatPlan:
    """One arm's request, its templates not yet filled."""

    model: str | None
    """The model asked for (None: neither the runner nor the arm names one)."""
    system: str | None
    messages: tuple[ChatMessage, ...]
    prompt: str | None
    fields: Mapping[str, Any]
    """Every other request field (``temperature``, ``max_tokens``, ``top_p`` ...)."""
    declared: Mapping[str, Any]
    """The template facets the arm declares, as declared (reported in the manifest)."""
    call: str | None = None
    """The scenario input holding a recorded request to send instead of the templates."""
    level: Level = "paragraphs"
    """How the messages are cut into removable parts."""

    def templates(self) -> list[tuple[str, str]]:
        """``(key, template)`` for each template the request fills: ``system``,
        ``messages[i].content``, ``prompt``.
        """
        found = [("system", self.system)] if self.system is not None else []
        found += [(f"messages[{i}].content", m.content) for i, m in enumerate(self.messages)]
        found += [("prompt", self.prompt)] if self.prompt is not None else []
        return found

    def render(self, inputs: Mapping[str, Any]) -> list[dict[str, str]]:
        """The messages sent, filled from the scenario's ``inputs``."""
        system = self.system  # "" is sent as written, like every template; None sends none
        sent = [{"role": "system", "content": render(system, inputs)}] if system is not None else []
        sent += [{"role": m.role, "content": render(m.content, inputs)} for m in self.messages]
        if self.prompt is not None:
            sent.append({"role": "user", "content": render(self.prompt, inputs)})
        return sent

    def request(self, inputs: Mapping[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The messages and the request fields (``model`` among them) for a scenario: the
        templates filled, or the recorded request ``call`` names, under this plan's fields.

        Raises:
            ValueError: the recorded request is not a request with messages and a model.
        """
        if self.call is None:
            if self._sends_passages(inputs):  # the passages go in once the parts are cut
                inputs = {**inputs, INPUT: PLACEHOLDER}
            return self.render(inputs), {"model": self.model, **self.fields}
        body = inputs.get(self.call)
        if not isinstance(body, Mapping) or not isinstance(body.get("messages"), list):
            msg = f"input {self.call!r} must hold a recorded request with a 'messages' list"
            raise ValueError(msg)
        fields = {k: v for k, v in body.items() if k not in CALL_FIELDS_DROPPED}
        model = self.model if self.model is not None else body.get("model")
        if not isinstance(model, str):
            msg = (
                f"the recorded request in input {self.call!r} names no model; set runner.model "
                "(blame: --model)"
            )
            raise ValueError(msg)
        return [dict(m) for m in body["messages"]], {"model": model, **fields, **self.fields}

    def passages(self, inputs: Mapping[str, Any]) -> tuple[Passage, ...] | None:
        """The scenario's passages when a template sends them as ``{context}``; else None
        (the ``context`` input, if any, is an ordinary input).

        Raises:
            ValueError: the ``context`` input is not a list of passages.
        """
        return passages_of(inputs) if self._sends_passages(inputs) else None

    def _sends_passages(self, inputs: Mapping[str, Any]) -> bool:
        """A template names ``{context}`` and the scenario's ``context`` is a list."""
        if self.call is not None or not isinstance(inputs.get(INPUT), list):
            return False
        return names_passages([t for _, t in self.templates()])

    def manifest(self, served: str | None) -> dict[str, Any]:
        """What the run reports: the model the API says it served (under ``model`` the name
        asked for when the API named a dated snapshot of it, and as served under
        ``served_model``), the request fields sent, and the template facets the arm declares.
        A reply that names no model reports the model asked for, with ``served_model: null``
        saying the server did not confirm it.
        """
        found: dict[str, Any] = {**self.fields, **self.declared}
        if served is not None:
            found["model"] = reported_model(self.model, served)
            found["served_model"] = served
        elif self.model is not None:
            found["model"] = self.model
            found["served_model"] = None
        return found


def reported_model(requested: str | None, served: str) -> str:
    """``requested`` when ``served`` is it or a dated snapshot of it, else ``served`` (a silent
    fallback to another model then contradicts the arm's ``model`` facet).
    """
    if requested is None or served == requested:
        return served
    suffix = served[len(requested) :] if served.startswith(requested) else ""
    return requested if suffix and _SNAPSHOT.fullmatch(suffix) else served


def _template(facets: Mapping[str, Any], key: str, default: str | None) -> str | None:
    if key not in facets:
        return default
    value = facets[key]
    if value is not None and not isinstance(value, str):
        msg = (
            f"facet {key!r} is a template and must be text (or null for none), got "
            f"{type(value).__name__}"
        )
        raise ValueError(msg)
    if value is not None:
        try:
            template_fields(value)
        except ValueError as exc:
            msg = f"facet {key!r}: {exc}"
            raise ValueError(msg) from exc
    return value


def _messages(facets: Mapping[str, Any], default: list[ChatMessage]) -> tuple[ChatMessage, ...]:
    if "messages" not in facets:
        return tuple(default)
    value = facets["messages"]
    try:
        return tuple(_MESSAGES.validate_python([] if value is None else value))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
        msg = (
            f"facet 'messages{where}': {first['msg']}; write a list of {{role, content}} "
            "(role system, developer, user or assistant; content a template)"
        )
        raise ValueError(msg) from exc


def plan_for(config: ChatRunnerConfig, facets: Mapping[str, Any]) -> ChatPlan:
    """The request of an arm with these (nested) ``facets``.

    Raises:
        ValueError: a template facet that is not text, malformed ``messages``, or a ``model``
            facet that is not text.
    """
    model = facets.get("model", config.model)
    if model is not None and not isinstance(model, str):
        msg = f"facet 'model' must be text (a model name), got {type(model).__name__}"
        raise ValueError(msg)
    fields: dict[str, Any] = {}
    if config.temperature is not None:
        fields["temperature"] = config.temperature
    if config.max_tokens is not None:
        fields["max_tokens"] = config.max_tokens
    fields.update(config.request)
    fields.update((k, v) for k, v in facets.items() if k not in (*TEMPLATES, "model"))
    return ChatPlan(
        model=model,
        system=_template(facets, "system", config.system),
        messages=_messages(facets, config.messages),
        prompt=_template(facets, "prompt", config.prompt),
        fields=fields,
        declared={k: facets[k] for k in TEMPLATES if k in facets},
        call=config.call,
        level=config.parts,
    )


def run_cost(
    input_tokens: int, output_tokens: int, total: int | None, price: ChatPrice | None
) -> dict[str, float]:
    """A run's cost from the reply's usage: ``input_tokens``, ``output_tokens``, ``tokens``
    (their total), and ``usd`` when the runner has a ``price``.
    """
    cost = {
        "input_tokens": float(input_tokens),
        "output_tokens": float(output_tokens),
        "tokens": float(total if total is not None else input_tokens + output_tokens),
    }
    if price is not None:
        cost["usd"] = (
            input_tokens * float(price.input_per_1k) + output_tokens * float(price.output_per_1k)
        ) / 1000.0
    return cost
