"""Hostile ``usage`` values (issue 45: a reply saying 1e308 tokens poisoned every total; issue
39: the wrong types ended runs with Python's TypeError): whatever a server puts there, the chat
runner's cost is a cost the engine accepts, or the run fails with a RunnerReturnError naming
the field — never another exception. The loopback tests in test_chat_hostile.py send such
replies through the real client; this fuzzes the same parsing over many more values."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from counterfact.exceptions import RunnerReturnError
from counterfact.orchestrator.runners.chatconfig import ChatPrice
from counterfact.orchestrator.runners.chatlimits import token_counts
from counterfact.orchestrator.runners.chatplan import run_cost
from counterfact.probes.runner import coerce_result

COUNTS = st.one_of(
    st.none(),
    st.integers(min_value=-(10**20), max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e308, 10**308, 2**63, -1, 0, True, "12", "abc", [], {}, [1]]),
    st.text(max_size=5),
)
USAGE = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "prompt_tokens": COUNTS,
            "completion_tokens": COUNTS,
            "total_tokens": COUNTS,
        },
    ),
    COUNTS,
    st.lists(COUNTS, max_size=3),
)


@settings(max_examples=400, deadline=None)
@given(usage=USAGE, priced=st.booleans())
def test_any_usage_is_a_cost_or_a_runner_return_error(usage: Any, priced: bool) -> None:
    price = ChatPrice(input_per_1k=0.5, output_per_1k=1.5) if priced else None
    said = ""
    try:
        counts = token_counts(usage)
        cost = None if counts is None else run_cost(*counts, price)
        result = coerce_result({"output": "x", "cost": cost})
    except RunnerReturnError as exc:
        said = str(exc)
    if said:
        assert "usage" in said or "cost" in said
        return
    assert result.cost is None or all(0 <= v <= 1e15 for v in result.cost.values())
