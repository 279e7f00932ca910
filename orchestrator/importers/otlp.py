"""Chat calls from an OTLP JSON export: spans that carry OpenTelemetry's GenAI attributes.

The GenAI semantic conventions record a model call on its span: ``gen_ai.input.messages`` and
``gen_ai.system_instructions`` (JSON: messages of ``{role, parts: [...]}``, parts of type
``text``, ``tool_call`` and ``tool_call_response``), ``gen_ai.output.messages`` (the reply),
``gen_ai.request.model`` and the request's settings (``gen_ai.request.temperature``,
``max_tokens``, ``top_p``, ``stop_sequences`` ...). Each such span becomes one chat-completions
request, named by its span id: a message's text parts joined by blank lines (so each is a
paragraph ``counterfact blame`` can remove), tool calls and their results as the API's
``tool_calls`` and ``tool`` messages (never removed: the request must stay valid).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from counterfact.exceptions import ConfigError
from counterfact.orchestrator.importers.recorded import RecordedCall, call_of

REQUEST_FIELDS = {
    "gen_ai.request.temperature": "temperature",
    "gen_ai.request.max_tokens": "max_tokens",
    "gen_ai.request.top_p": "top_p",
    "gen_ai.request.frequency_penalty": "frequency_penalty",
    "gen_ai.request.presence_penalty": "presence_penalty",
    "gen_ai.request.stop_sequences": "stop",
}
"""GenAI request attributes and the chat-completions field each becomes."""


def is_otlp(data: Any) -> bool:
    """``data`` is an OTLP JSON trace export."""
    return isinstance(data, dict) and isinstance(data.get("resourceSpans"), list)


def _value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as plain data."""
    if not isinstance(value, dict):
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [_value(v) for v in value["arrayValue"].get("values", [])]
    if "kvlistValue" in value:  # a structured attribute: messages as OTLP maps, not JSON text
        pairs = value["kvlistValue"].get("values", [])
        return {str(kv["key"]): _value(kv.get("value")) for kv in pairs}
    return None


def _attributes(span: Mapping[str, Any]) -> dict[str, Any]:
    found = span.get("attributes")
    if not isinstance(found, list):
        return {}
    return {a["key"]: _value(a.get("value")) for a in found if isinstance(a, dict) and "key" in a}


def _json_attr(attrs: Mapping[str, Any], key: str, where: str) -> Any:
    raw = attrs.get(key)
    if raw is None or not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where}: {key} is not JSON ({exc.msg})", field="CALL") from exc


def _text(parts: Any) -> str | None:
    texts = [
        str(p.get("content", ""))
        for p in parts or []
        if isinstance(p, dict) and p.get("type") == "text"
    ]
    return "\n\n".join(texts) if texts else None


def _message(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One GenAI message as chat-completions messages (a tool reply per result)."""
    role, parts = str(message.get("role", "user")), message.get("parts") or []
    calls = [p for p in parts if isinstance(p, dict) and p.get("type") == "tool_call"]
    results = [p for p in parts if isinstance(p, dict) and p.get("type") == "tool_call_response"]
    if results:
        return [
            {"role": "tool", "tool_call_id": str(p.get("id", "")), "content": _as_text(p)}
            for p in results
        ]
    out: dict[str, Any] = {"role": role, "content": _text(parts)}
    if calls:
        out["tool_calls"] = [
            {
                "id": str(p.get("id", "")),
                "type": "function",
                "function": {"name": str(p.get("name", "")), "arguments": _args(p)},
            }
            for p in calls
        ]
    return [out]


def _as_text(part: Mapping[str, Any]) -> str:
    response = part.get("response")
    return response if isinstance(response, str) else json.dumps(response)


def _args(part: Mapping[str, Any]) -> str:
    arguments = part.get("arguments")
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def _span_call(span: Mapping[str, Any], attrs: Mapping[str, Any], where: str) -> RecordedCall:
    name = str(span.get("spanId") or span.get("span_id") or "")
    here = f"{where} span {name}"
    system = _text(_json_attr(attrs, "gen_ai.system_instructions", here))
    messages = [{"role": "system", "content": system}] if system else []
    inputs = _json_attr(attrs, "gen_ai.input.messages", here)
    if not isinstance(inputs, list):
        raise ConfigError(f"{here}: gen_ai.input.messages is not a list of messages", field="CALL")
    for message in inputs:
        if isinstance(message, dict):
            messages += _message(message)
    request: dict[str, Any] = {"model": attrs.get("gen_ai.request.model"), "messages": messages}
    request |= {field: attrs[key] for key, field in REQUEST_FIELDS.items() if key in attrs}
    outputs = _json_attr(attrs, "gen_ai.output.messages", here)
    answer = None
    if isinstance(outputs, list) and outputs and isinstance(outputs[0], dict):
        answer = _text(outputs[0].get("parts"))
    if answer is None:
        return call_of(request, name, here)
    response = {"choices": [{"message": {"role": "assistant", "content": answer}}]}
    return call_of({"request": request, "response": response}, name, here)


def _read_span(span: Any, where: str) -> RecordedCall | None:
    """One span's call (None: not a GenAI span); a malformed one is one line, not a crash."""
    try:
        attrs = _attributes(span) if isinstance(span, dict) else {}
        if "gen_ai.input.messages" not in attrs:
            return None
        return _span_call(span, attrs, where)
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        name = span.get("spanId", "?") if isinstance(span, dict) else "?"
        msg = f"{where} span {name}: malformed GenAI attributes ({type(exc).__name__}: {exc})"
        raise ConfigError(msg, field="CALL") from exc


def otlp_calls(data: Mapping[str, Any], where: str) -> list[RecordedCall]:
    """One call per GenAI span of an OTLP export.

    Raises:
        ConfigError: the export holds no span with ``gen_ai.input.messages``, or such a span
            is malformed.
    """
    calls: list[RecordedCall] = []
    for resource in data.get("resourceSpans") or []:
        for scope in (resource or {}).get("scopeSpans") or []:
            for span in (scope or {}).get("spans") or []:
                found = _read_span(span, where)
                if found is not None:
                    calls.append(found)
    if not calls:
        msg = (
            f"{where}: no span carries gen_ai.input.messages (OpenTelemetry's GenAI attributes); "
            "export the spans of your model calls with message content captured"
        )
        raise ConfigError(msg, field="CALL")
    return calls
