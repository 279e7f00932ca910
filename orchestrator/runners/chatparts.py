"""The parts of a chat request: what ``ablations`` can remove from what the chat runner sends.

A request's messages are numbered in the order sent, ``m0``, ``m1`` ...; inside a message, its
paragraphs ``m<i>.p<j>`` (split on blank lines) or its sentences ``m<i>.s<j>`` (split after
``.``, ``!`` or ``?``), counted from 0 through the whole message. Ids are given on the request
as it stands (nothing removed), so ``m2.p1`` names the same text in every probe.

Removing a part drops its text and the separator before it (after it, for a message's first
part); a message with every part removed is dropped whole. With nothing removed the messages
come back byte for byte: the baseline sends exactly the recorded request.

The **query** — the last paragraph of the last user message (its sentences, at the sentence
level) — is what is asked; ``counterfact blame`` never makes it a suspect.

Pure: text in, text out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Level = Literal["messages", "paragraphs", "sentences"]
"""How finely a message is cut into parts."""

LEVELS: tuple[Level, ...] = ("messages", "paragraphs", "sentences")

_PARAGRAPH_GAP = re.compile(r"(\n[ \t]*\n\s*)")
_SENTENCE_GAP = re.compile(r"(?<=[.!?])(\s+)(?=\S)")


@dataclass(frozen=True)
class Part:
    """One removable piece of a request."""

    id: str
    """``m<i>``, ``m<i>.p<j>`` or ``m<i>.s<j>``."""
    message: int
    """The index of its message, in the order sent."""
    role: str
    text: str


@dataclass(frozen=True)
class _Piece:
    """A message's text as alternating parts and separators (``id`` None)."""

    id: str | None
    text: str


def _paragraphs(text: str) -> list[str]:
    """``text`` cut into alternating chunk, gap, chunk ... (gaps at odd positions)."""
    return _PARAGRAPH_GAP.split(text)


def _pieces(index: int, text: str, level: Level) -> list[_Piece]:
    if level == "messages":
        return [_Piece(f"m{index}", text)]
    pieces: list[_Piece] = []
    count = 0
    for k, chunk in enumerate(_paragraphs(text)):
        if k % 2 == 1 or not chunk.strip():
            pieces.append(_Piece(None, chunk))
            continue
        inner = _SENTENCE_GAP.split(chunk) if level == "sentences" else [chunk]
        for n, bit in enumerate(inner):
            if n % 2 == 1:
                pieces.append(_Piece(None, bit))
            else:
                mark = "s" if level == "sentences" else "p"
                pieces.append(_Piece(f"m{index}.{mark}{count}", bit))
                count += 1
    return pieces


def _content(message: Mapping[str, Any]) -> str | None:
    """A message's text when it is plain text (other content is never a part)."""
    content = message.get("content")
    return content if isinstance(content, str) else None


def _splittable(message: Mapping[str, Any]) -> bool:
    """Messages whose removal keeps the request valid: not a tool call or its reply."""
    return (
        _content(message) is not None
        and not message.get("tool_calls")
        and (message.get("role") != "tool")
    )


def split(messages: Sequence[Mapping[str, Any]], level: Level) -> tuple[Part, ...]:
    """Every part of ``messages`` at ``level``, in the order sent."""
    found: list[Part] = []
    for i, message in enumerate(messages):
        text = _content(message)
        if text is None or not _splittable(message):
            continue
        role = str(message.get("role", ""))
        if level == "messages":
            found.append(Part(f"m{i}", i, role, text))
            continue
        found += [Part(p.id, i, role, p.text) for p in _pieces(i, text, level) if p.id is not None]
    return tuple(found)


def query_ids(messages: Sequence[Mapping[str, Any]], level: Level) -> tuple[str, ...]:
    """The ids of the question asked: the last paragraph of the last user message (all of it
    at the ``messages`` level); empty when no user message holds text.
    """
    users = [i for i, m in enumerate(messages) if m.get("role") == "user" and _content(m)]
    if not users:
        return ()
    i = users[-1]
    if level == "messages":
        return (f"m{i}",)
    pieces = _pieces(i, _content(messages[i]) or "", level)
    if level == "paragraphs":
        return tuple(p.id for p in pieces if p.id is not None)[-1:]
    chunks = _paragraphs(_content(messages[i]) or "")
    last = [c for k, c in enumerate(chunks) if k % 2 == 0 and c.strip()][-1]
    sentences = [s for n, s in enumerate(_SENTENCE_GAP.split(last)) if n % 2 == 0]
    ids = [p.id for p in pieces if p.id is not None]
    return tuple(ids[-len(sentences) :])


def covers(removed: str, part_id: str) -> bool:
    """``removed`` names ``part_id`` or the whole message it belongs to."""
    return part_id == removed or part_id.startswith(removed + ".")


def unknown(ids: Iterable[str], parts: Sequence[Part], messages: int) -> list[str]:
    """The ids in ``ids`` that name no part and no message of the request."""
    known = {p.id for p in parts} | {f"m{i}" for i in range(messages)}
    return [i for i in ids if i not in known]


def _joined(pieces: list[_Piece], removed: Sequence[str]) -> str | None:
    """The text with the removed parts dropped, each kept part after the gap that preceded it
    (the first kept one after none); None when no part is left.
    """
    lead = trail = gap = ""
    out: list[str] = []
    seen = False
    for piece in pieces:
        if piece.id is None:
            if seen:
                gap += piece.text
            else:
                lead += piece.text
            continue
        if not any(covers(r, piece.id) for r in removed):
            out += [gap, piece.text] if out else [piece.text]
        seen, gap = True, ""
    trail = gap
    if not out:
        return None
    return lead + "".join(out) + trail


def without(
    messages: Sequence[Mapping[str, Any]], removed: Sequence[str], level: Level
) -> tuple[list[dict[str, Any]], list[str]]:
    """``messages`` with the parts ``removed`` names taken out, and the ids of the parts sent.

    Messages that are not plain text (tool calls, tool replies, images) pass through untouched.
    """
    sent: list[dict[str, Any]] = []
    ids: list[str] = []
    for i, message in enumerate(messages):
        text = _content(message)
        if text is None or not _splittable(message):
            sent.append(dict(message))
            continue
        pieces = _pieces(i, text, level)
        if f"m{i}" in removed:
            continue
        left = text if not removed else _joined(pieces, removed)
        if left is None:
            continue
        sent.append(dict(message) | {"content": left})
        ids += [
            p.id for p in pieces if p.id is not None and not any(covers(r, p.id) for r in removed)
        ]
    return sent, ids
