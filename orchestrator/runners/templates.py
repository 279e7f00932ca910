"""Message templates: ``str.format`` text over a scenario's inputs (``"Q: {question}"``).

A template names inputs by their key (``{question}``, ``{case[title]}``, ``{n:>4}``); ``{{`` and
``}}`` are literal braces. Positional fields (``{}``, ``{0}``) are refused: there is nothing to
number. What a template names is checked against every scenario before any run is spent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from string import Formatter
from typing import Any

_ROOT = re.compile(r"[^.\[]*")


def template_fields(text: str) -> tuple[str, ...]:
    """The input keys ``text`` names, in order of first use (``{case[title]}`` names ``case``).

    Raises:
        ValueError: the text is not a valid template (an unmatched brace, a positional field);
            the message says how to fix it.
    """
    found: dict[str, None] = {}
    _collect(text, found, depth=0)
    return tuple(found)


def _collect(text: str, found: dict[str, None], depth: int) -> None:
    try:
        parts = list(Formatter().parse(text))
    except ValueError as exc:
        msg = (
            f"{exc} in {text[:80]!r}; a field is written {{name}}, and a literal brace doubled "
            "({{ or }})"
        )
        raise ValueError(msg) from exc
    for _, field, spec, _ in parts:
        if field is None:
            continue
        match = _ROOT.match(field)
        root = match.group(0) if match is not None else ""
        if not root.strip() or root.isdigit():
            msg = (
                f"template field {{{field}}} is positional; name a scenario input instead, "
                "e.g. {question} (write {{ and }} for literal braces)"
            )
            raise ValueError(msg)
        found.setdefault(root, None)
        if spec and depth < 2:  # a nested field in the format spec: {x:{width}}
            _collect(spec, found, depth + 1)


def render(text: str, inputs: Mapping[str, Any]) -> str:
    """``text`` with its fields filled from ``inputs`` (``str.format_map``)."""
    return text.format_map(dict(inputs))
