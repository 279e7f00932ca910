"""Passages a scenario carries as a list: ``inputs.context: [{id, text, optional?}]``.

A template names them as ``{context}``: they are sent joined by blank lines, each a part named
``context:<id>`` that an arm's ``ablations`` removes (``context:p7``) and, for a passage marked
``optional``, that only an arm's ``restorations`` adds. The rest of the message is cut into
parts as usual; the ids are counted with ``{context}`` standing in as one placeholder, so they
do not move when passages come and go.

Pure: data in, data out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from counterfact.probes.ablation import PASSAGE

INPUT = "context"
"""The scenario input that holds the passages."""
PLACEHOLDER = "\u2063context\u2063"
"""What ``{context}`` is rendered as until the passages are filled in (invisible separators:
text no template or passage holds)."""


@dataclass(frozen=True)
class Passage:
    """One passage of a scenario's context."""

    id: str
    text: str
    optional: bool = False
    """Absent unless an arm restores it."""

    @property
    def part(self) -> str:
        """Its part id, ``context:<id>``."""
        return PASSAGE + self.id


def passages_of(inputs: Mapping[str, Any]) -> tuple[Passage, ...] | None:
    """The scenario's passages; None when its ``context`` input is not a list of them.

    Raises:
        ValueError: a list whose items are not ``{id, text}`` objects, or an id given twice.
    """
    found = inputs.get(INPUT)
    if not isinstance(found, list):
        return None
    passages = []
    for i, item in enumerate(found):
        ok = isinstance(item, dict) and isinstance(item.get("id"), str)
        if not ok or not isinstance(item.get("text"), str):
            msg = f"input 'context' item {i} must be {{id: text, text: text}}, got {item!r:.80}"
            raise ValueError(msg)
        optional = item.get("optional", False)
        if not isinstance(optional, bool):
            msg = f"input 'context' item {i}: optional must be true or false, got {optional!r}"
            raise ValueError(msg)
        passages.append(Passage(item["id"], item["text"], optional))
    ids = [p.id for p in passages]
    if len(set(ids)) < len(ids):
        twice = next(i for i in ids if ids.count(i) > 1)
        raise ValueError(f"input 'context' names passage {twice!r} twice")
    return tuple(passages)


def chosen(
    passages: Sequence[Passage], ablations: Sequence[str], restorations: Sequence[str]
) -> list[Passage]:
    """The passages sent: every one not ablated, an optional one only when restored."""
    return [
        p
        for p in passages
        if p.part not in ablations and (not p.optional or p.part in restorations)
    ]


def filled(messages: Sequence[Mapping[str, Any]], sent: Sequence[Passage]) -> list[dict[str, Any]]:
    """``messages`` with the placeholder replaced by the passages sent, joined by blank lines."""
    text = "\n\n".join(p.text for p in sent)
    return [
        dict(m) | {"content": m["content"].replace(PLACEHOLDER, text)}
        if isinstance(m.get("content"), str) and PLACEHOLDER in m["content"]
        else dict(m)
        for m in messages
    ]


def names_passages(templates: Sequence[str]) -> bool:
    """Some template sends the passages: it names ``{context}`` itself (``{context[0]}`` and
    the like read the input as it is).
    """
    return any("{" + INPUT + "}" in t for t in templates)


def held(text: str) -> bool:
    """A part whose text is the placeholder alone: it stands for the passages, not a suspect."""
    return text.strip() == PLACEHOLDER
