"""The parts of a chat request: what ``ablations`` can remove from what the chat runner sends.

A request's messages are numbered in the order sent, ``m0``, ``m1`` ...; inside a message, its
paragraphs ``m<i>.p<j>`` (split on blank lines) or its sentences ``m<i>.s<j>`` (split after
``.``, ``!`` or ``?``), counted from 0 through the whole message. Ids are given on the request
as it stands (nothing removed), so ``m2.p1`` names the same text in every probe.

Removing a part drops its text and one separator beside it (never merging two paragraphs); a
message with every part removed is dropped whole, unless the request needs it (a tool's reply
stays, emptied). With nothing removed the messages come back byte for byte: the baseline sends
exactly the recorded request.

The **query** — the last paragraph of the last user message (its sentences, at the sentence
level) — is what is asked; ``counterfact blame`` never makes it a suspect.

Pure: text in, text out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from counterfact.orchestrator.runners.chatcontext import (
    PLACEHOLDER,
    Passage,
    chosen,
    filled,
    held,
)
from counterfact.probes.ablation import PASSAGE, covers

Level = Literal["messages", "paragraphs", "sentences"]
"""How finely a message is cut into parts."""

LEVELS: tuple[Level, ...] = ("messages", "paragraphs", "sentences")

_PARAGRAPH_GAP = re.compile(r"(\r?\n[ \t]*\r?\n\s*)")
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
    block: int = 0
    """The paragraph it is in (a sentence's paragraph; a paragraph's own index)."""


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
                pieces.append(_Piece(f"m{index}.{mark}{count}", bit, k))
                count += 1
    return pieces


def _content(message: Mapping[str, Any]) -> str | None:
    """A message's text when it is plain text (other content, such as images, is never a
    part).
    """
    content = message.get("content")
    return content if isinstance(content, str) else None


def _kept_whole(message: Mapping[str, Any]) -> bool:
    """A message the request needs even with all its text removed: a tool's reply (each tool
    call needs one) or an assistant message that makes tool calls.
    """
    return message.get("role") == "tool" or bool(message.get("tool_calls"))


def split(messages: Sequence[Mapping[str, Any]], level: Level) -> tuple[Part, ...]:
    """Every part of ``messages`` at ``level``, in the order sent (a tool's reply has parts
    too: removing them empties its content, the message stays).
    """
    found: list[Part] = []
    for i, message in enumerate(messages):
        text = _content(message)
        if text is None or not text.strip():
            continue
        role = str(message.get("role", ""))
        found += [Part(p.id, i, role, p.text) for p in _pieces(i, text, level) if p.id is not None]
    return tuple(found)


def query_ids(messages: Sequence[Mapping[str, Any]], level: Level) -> tuple[str, ...]:
    """The ids of the question asked: the last paragraph of the last user message that holds
    text (all of it at the ``messages`` level); empty when no user message does.
    """
    users = [
        i for i, m in enumerate(messages) if m.get("role") == "user" and (_content(m) or "").strip()
    ]
    if not users:
        return ()
    i = users[-1]
    text = _content(messages[i]) or ""
    if level == "messages":
        return (f"m{i}",)
    # {context} standing alone is what is given, not what is asked
    asked = [p for p in _pieces(i, text, level) if p.id is not None and not held(p.text)]
    last = asked[-1].block if asked else None
    return tuple(p.id for p in asked if p.block == last and p.id is not None)


def unknown(ids: Iterable[str], parts: Sequence[Part]) -> list[str]:
    """The ids in ``ids`` that name no part and no message holding parts (a message of images
    only, or an empty one, has nothing to remove).
    """
    known = {p.id for p in parts} | set(messages_of(parts))
    return [i for i in ids if i not in known]


def messages_of(parts: Sequence[Part]) -> list[str]:
    """The ids of the messages ``parts`` are in (``m1``: all of its parts at once), in order."""
    return list(dict.fromkeys(f"m{p.message}" for p in parts))


def _joined(pieces: list[_Piece], removed: Sequence[str]) -> str | None:
    """The text with the removed parts dropped; None when no part is left.

    A kept part follows the gap before it, or, when parts were removed just before it, the
    wider of that gap and the one before the removed run (the one with more line breaks), so a
    removed sentence never merges two paragraphs. The first kept part follows none.
    """
    lead = gap = ""
    out: list[str] = []
    seen = False
    dropped: str | None = None  # the gap before the run of removed parts just passed
    for piece in pieces:
        if piece.id is None:
            if seen:
                gap += piece.text
            else:
                lead += piece.text
            continue
        if any(covers(r, piece.id) for r in removed):
            dropped = gap if dropped is None else dropped
        else:
            wide = gap if dropped is None else max(dropped, gap, key=lambda g: g.count("\n"))
            out += [wide, piece.text] if out else [piece.text]
            dropped = None
        seen, gap = True, ""
    if not out:
        return None
    return lead + "".join(out) + gap


def without(
    messages: Sequence[Mapping[str, Any]], removed: Sequence[str], level: Level
) -> tuple[list[dict[str, Any]], list[str]]:
    """``messages`` with the parts ``removed`` names taken out, and the ids of the parts sent.

    A message none of whose parts is removed passes through as it was. One emptied is dropped,
    unless the request needs it (a tool's reply, an assistant's tool calls): that one stays with
    empty content. Content that is not text (images) is never touched.
    """
    sent: list[dict[str, Any]] = []
    ids: list[str] = []
    for i, message in enumerate(messages):
        text = _content(message)
        pieces = _pieces(i, text, level) if text is not None and text.strip() else []
        mine = [p.id for p in pieces if p.id is not None]
        gone = [p for p in mine if any(covers(r, p) for r in removed)]
        if not gone:
            sent.append(dict(message))
            ids += mine
            continue
        left = _joined(pieces, removed)
        if left is None and not _kept_whole(message):
            continue
        sent.append(dict(message) | {"content": left or ""})
        ids += [p for p in mine if p not in gone]
    return sent, ids


def sent_parts(
    messages: Sequence[Mapping[str, Any]],
    level: Level,
    ablations: Sequence[str],
    restorations: Sequence[str],
    passages: Sequence[Passage] | None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The messages an arm sends and the ids of the parts in them: its ablations taken out,
    and a scenario's passages (``inputs.context``) filled in where ``{context}`` still stands,
    those it keeps each a part (none listed when ``{context}`` went with its part).
    """
    placeholders = {p.id for p in split(messages, level) if held(p.text)}
    removed = [a for a in ablations if not a.startswith(PASSAGE)]
    sent, ids = without(messages, removed, level)
    if passages is None:
        return sent, ids
    kept = chosen(passages, ablations, restorations)
    ids = [i for i in ids if i not in placeholders]
    standing = any(PLACEHOLDER in str(m.get("content") or "") for m in sent)
    return filled(sent, kept), ids + ([p.part for p in kept] if standing else [])


def suspects_in(
    messages: Sequence[Mapping[str, Any]], level: Level, passages: Sequence[Passage] | None
) -> list[str]:
    """Every part id in the order sent, a scenario's passages (not the optional ones) where
    ``{context}`` first stands: in place of its part when it stands alone, after it when the
    part holds other text too.
    """
    found: list[str] = []
    listed = passages is None
    for part in split(messages, level):
        here = PLACEHOLDER in part.text
        if not (here and held(part.text) and passages is not None):
            found.append(part.id)
        if here and not listed and passages is not None:
            found += [p.part for p in passages if not p.optional]
            listed = True
    return found
