"""The parts of a chat request (:mod:`counterfact.orchestrator.runners.chatparts`)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from counterfact.orchestrator.runners.chatparts import LEVELS, query_ids, split, unknown, without

MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You answer.\n\nBe brief. Really."},
    {"role": "user", "content": "Passage A says x.\n\nPassage B says y.\n\n\nWhat is it? Now."},
]

text = st.text(alphabet=st.sampled_from("ab .!?\n\t"), max_size=60)


@given(contents=st.lists(text, min_size=1, max_size=4), level=st.sampled_from(LEVELS))
def test_nothing_removed_sends_the_request_byte_for_byte(contents: list[str], level: str) -> None:
    messages = [{"role": "user", "content": c} for c in contents]
    sent, ids = without(messages, [], level)  # type: ignore[arg-type]
    assert sent == messages
    assert ids == [p.id for p in split(messages, level)]  # type: ignore[arg-type]


def _squeezed(text: str) -> str:
    return "".join(text.split())


@given(
    contents=st.lists(text, min_size=1, max_size=3),
    level=st.sampled_from(LEVELS),
    pick=st.lists(st.booleans(), max_size=40),
)
def test_what_is_sent_is_exactly_the_parts_kept(
    contents: list[str], level: str, pick: list[bool]
) -> None:
    """Remove any subset of parts: the ids sent are the others, in order, and each message
    sent holds exactly its kept parts' text (whitespace aside)."""
    messages = [{"role": "user", "content": c} for c in contents]
    parts = split(messages, level)  # type: ignore[arg-type]
    removed = [p.id for p, gone in zip(parts, pick, strict=False) if gone]
    sent, ids = without(messages, removed, level)  # type: ignore[arg-type]
    kept = [p for p in parts if p.id not in removed]
    assert ids == [p.id for p in kept]
    by_message = {p.message for p in kept}
    emptied = {p.message for p in parts} - by_message
    assert len(sent) == len(messages) - len(emptied)  # only messages emptied by it are dropped
    left = [i for i in range(len(messages)) if i not in emptied]
    for index, message in zip(left, sent, strict=True):
        if index in by_message:
            mine = "".join(p.text for p in kept if p.message == index)
            assert _squeezed(message["content"]) == _squeezed(mine)
        else:  # no part of it: passed through as it was
            assert message == messages[index]


@pytest.mark.parametrize(
    ("level", "ids", "query"),
    [
        ("messages", ["m0", "m1"], ("m1",)),
        ("paragraphs", ["m0.p0", "m0.p1", "m1.p0", "m1.p1", "m1.p2"], ("m1.p2",)),
        (
            "sentences",
            ["m0.s0", "m0.s1", "m0.s2", "m1.s0", "m1.s1", "m1.s2", "m1.s3"],
            ("m1.s2", "m1.s3"),
        ),
    ],
)
def test_ids_in_the_order_sent_and_the_question(level: str, ids: list[str], query: tuple) -> None:
    assert [p.id for p in split(MESSAGES, level)] == ids  # type: ignore[arg-type]
    assert query_ids(MESSAGES, level) == query  # type: ignore[arg-type]


def test_a_removed_paragraph_takes_its_gap_and_ids_stay_stable() -> None:
    sent, ids = without(MESSAGES, ["m1.p0"], "paragraphs")
    assert sent[1]["content"] == "Passage B says y.\n\n\nWhat is it? Now."
    assert ids == ["m0.p0", "m0.p1", "m1.p1", "m1.p2"]  # m1.p1 keeps its name
    sent, _ = without(MESSAGES, ["m1.p1"], "paragraphs")
    assert sent[1]["content"] == "Passage A says x.\n\n\nWhat is it? Now."


def test_a_whole_message_goes_and_a_message_emptied_is_dropped() -> None:
    sent, ids = without(MESSAGES, ["m0"], "paragraphs")
    assert [m["role"] for m in sent] == ["user"] and ids[0] == "m1.p0"
    sent, _ = without(MESSAGES, ["m0.p0", "m0.p1"], "paragraphs")
    assert [m["role"] for m in sent] == ["user"]


def test_a_tool_reply_has_parts_and_stays_when_emptied() -> None:
    """A passage that came back from a tool can be blamed; the reply itself must stay (each
    tool call needs one), and the assistant's tool call is never touched."""
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Rain.\n\nCold."},
        {"role": "user", "content": "So?"},
    ]
    assert [p.id for p in split(messages, "paragraphs")] == ["m0.p0", "m2.p0", "m2.p1", "m3.p0"]
    sent, ids = without(messages, ["m2.p0"], "paragraphs")
    assert sent[2]["content"] == "Cold." and ids == ["m0.p0", "m2.p1", "m3.p0"]
    sent, _ = without(messages, ["m2"], "paragraphs")
    assert sent[2] == {"role": "tool", "tool_call_id": "c1", "content": ""}
    assert sent[1] == messages[1]
    assert unknown(["m1"], split(messages, "paragraphs")) == ["m1"]  # nothing to remove there


def test_a_removed_sentence_never_merges_two_paragraphs() -> None:
    m = [{"role": "user", "content": "A. B.\n\nC. D.\r\n\r\nE?"}]
    assert [p.id for p in split(m, "sentences")][-1] == "m0.s4"  # CRLF breaks paragraphs too
    assert without(m, ["m0.s1"], "sentences")[0][0]["content"] == "A.\n\nC. D.\r\n\r\nE?"
    assert without(m, ["m0.s2"], "sentences")[0][0]["content"] == "A. B.\n\nD.\r\n\r\nE?"


def test_untouched_messages_pass_through_even_when_empty() -> None:
    m = [{"role": "user", "content": "x\n\ny"}, {"role": "user", "content": "  "}]
    assert without(m, ["m0.p0"], "paragraphs")[0] == [{"role": "user", "content": "y"}, m[1]]
    assert query_ids([{"role": "user", "content": "Q?"}, m[1]], "sentences") == ("m0.s0",)


def test_unknown_names_what_is_no_part() -> None:
    parts = split(MESSAGES, "paragraphs")
    assert unknown(["m1", "m1.p2", "m1.p9", "system"], parts) == ["m1.p9", "system"]
