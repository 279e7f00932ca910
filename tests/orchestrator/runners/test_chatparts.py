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


@given(contents=st.lists(text, min_size=1, max_size=3), level=st.sampled_from(LEVELS))
def test_the_parts_join_back_to_each_message(contents: list[str], level: str) -> None:
    messages = [{"role": "user", "content": c} for c in contents]
    parts = split(messages, level)  # type: ignore[arg-type]
    for i, c in enumerate(contents):
        mine = [p.text for p in parts if p.message == i]
        assert "".join(mine) == "".join(c.split()) or all(t in c for t in mine)


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


def test_tool_calls_and_their_replies_are_never_parts() -> None:
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Rain.\n\nCold."},
        {"role": "user", "content": "So?"},
    ]
    assert [p.id for p in split(messages, "paragraphs")] == ["m0.p0", "m3.p0"]
    sent, _ = without(messages, ["m0.p0"], "paragraphs")
    assert sent == messages[1:]  # m0 went whole; the tool exchange passed through untouched


def test_unknown_names_what_is_no_part() -> None:
    parts = split(MESSAGES, "paragraphs")
    assert unknown(["m1", "m1.p2", "m1.p9", "system"], parts, 2) == ["m1.p9", "system"]
