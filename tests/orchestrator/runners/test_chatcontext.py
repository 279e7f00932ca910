"""A scenario's passages as parts: ``inputs.context: [{id, text, optional?}]`` (issue 38 item 1),
through the chat runner against the loopback stand-in with the real ``openai`` client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from counterfact import ConfigError, compare_arms, find_culprits, load_sweep
from counterfact.orchestrator.runners.chatcontext import passages_of
from tests.context_model import context_model
from tests.standin import StandIn

PASSAGES = [
    {"id": "atlas", "text": "The atlas lists Canberra as the capital."},
    {"id": "blog", "text": "A blog says the capital moved to Sydney in 2021."},
    {"id": "wiki", "text": "The wiki agrees the capital is Canberra."},
    {"id": "memo", "text": "An old memo: the capital moved to Sydney in 2021.", "optional": True},
]
SCENARIO = {"id": "q", "inputs": {"context": PASSAGES, "question": "What is the capital?"}}


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "none")


@pytest.fixture
def api() -> Iterator[StandIn]:
    with StandIn(median_s=0.001, p95_s=0.002, answer=context_model(["moved to Sydney"])) as api:
        yield api


def _runner(api: StandIn) -> dict[str, Any]:
    return {
        "kind": "chat",
        "model": "stand-in",
        "base_url": api.base_url,
        "temperature": 0,
        "system": "Answer from the passages.",
        "prompt": "Passages:\n\n{context}\n\n{question}",
    }


def _runs(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines()]


def test_passages_are_sent_joined_and_named_context_ids(api: StandIn, tmp_path: Path) -> None:
    compare_arms(
        [
            {"id": "all"},
            {"id": "no-blog", "ablations": ["context:blog"]},
            {"id": "memo", "restorations": ["context:memo"]},
        ],
        _runner(api),
        samples=2,
        scenarios=[{**SCENARIO, "reference": "Sydney"}],
        comparator="contains",
        out=tmp_path / "o",
    )
    by_arm = {r["arm"]: r for r in _runs(tmp_path / "o") if r["seed"] == 0}
    assert by_arm["all"]["manifest"]["parts"] == [
        "m0.p0", "m1.p0", "m1.p2", "context:atlas", "context:blog", "context:wiki",
    ]  # fmt: skip
    assert "context:blog" not in by_arm["no-blog"]["manifest"]["parts"]
    assert "context:memo" in by_arm["memo"]["manifest"]["parts"]
    sent = [b["messages"][1]["content"] for b in api.stats.bodies]
    full = (
        "Passages:\n\n" + "\n\n".join(p["text"] for p in PASSAGES[:3]) + "\n\nWhat is the capital?"
    )
    assert full in sent  # the baseline: the three passages, joined by blank lines
    assert by_arm["all"]["output"].endswith("Sydney.")
    assert by_arm["no-blog"]["output"].endswith("Canberra.")


def test_bisect_over_passages_finds_the_one_that_misleads(api: StandIn) -> None:
    raw_runner = _runner(api)
    result = find_culprits(
        ["context:atlas", "context:blog", "context:wiki"],
        raw_runner,  # type: ignore[arg-type]
        inputs=SCENARIO["inputs"],  # type: ignore[arg-type]
        reference="Sydney",
        comparator="contains",
    )
    assert result.culprits == [["context:blog"]]


def test_suspects_all_lists_passages_in_place_of_the_placeholder(api: StandIn) -> None:
    from counterfact.orchestrator.config.loading import validate_config
    from counterfact.orchestrator.config.resolve import resolve_bisect

    raw = {
        "name": "p",
        "runner": _runner(api),
        "scenarios": [{**SCENARIO, "reference": "Sydney"}],
        "comparator": "contains",
        "bisect": {"suspects": "all", "keep": ["m0"]},
    }
    found = resolve_bisect(validate_config(raw), base_dir=Path.cwd())
    assert found.settings.suspects == (
        "m1.p0",
        "context:atlas",
        "context:blog",
        "context:wiki",
    )  # fmt: skip  (the question m1.p2, the system message and the optional memo left out)


@pytest.mark.parametrize(
    ("arm", "words"),
    [
        ({"id": "x", "ablations": ["context:blgo"]}, "did you mean 'context:blog'?"),
        ({"id": "x", "restorations": ["context:blog"]}, "no optional passage"),
    ],
)
def test_a_passage_id_that_names_nothing_is_refused(
    api: StandIn, arm: dict[str, Any], words: str
) -> None:
    raw = {
        "name": "p",
        "runner": _runner(api),
        "scenarios": [SCENARIO],
        "arms": [{"id": "base"}, arm],
    }
    with pytest.raises(ConfigError, match=words):
        load_sweep(raw)


def test_malformed_passages_are_refused() -> None:
    assert passages_of({"context": "plain text"}) is None  # a string is an ordinary input
    with pytest.raises(ValueError, match="item 1 must be"):
        passages_of({"context": [{"id": "a", "text": "x"}, {"text": "no id"}]})
    with pytest.raises(ValueError, match="names passage 'a' twice"):
        passages_of({"context": [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}]})


def test_a_context_input_no_template_sends_bare_is_an_ordinary_input(api: StandIn) -> None:
    """Loaded as before: a list of strings, or a template reading it by index."""
    for prompt, context in (
        ("{question}", ["one", "two"]),
        ("{context[0][text]} {question}", PASSAGES),
    ):
        runner = {**_runner(api), "prompt": prompt}
        raw = {
            "name": "p",
            "runner": runner,
            "scenarios": [{"id": "q", "inputs": {"context": context, "question": "Q?"}}],
            "arms": [{"id": "base"}, {"id": "alt", "facets": {"temperature": 1}}],
        }
        load_sweep(raw)


def test_passages_are_listed_only_while_context_is_sent(api: StandIn, tmp_path: Path) -> None:
    """Removing the message that holds {context} removes the passages: the manifest does not
    claim them, so a restoration there is not 'sent'."""
    runner = {**_runner(api), "system": "Passages:\n\n{context}", "prompt": "{question}"}
    compare_arms(
        [{"id": "all"}, {"id": "no-system", "ablations": ["m0"], "restorations": ["context:memo"]}],
        runner,
        samples=2,
        scenarios=[{**SCENARIO, "reference": "Sydney"}],
        comparator="contains",
        out=tmp_path / "o",
    )
    by_arm = {r["arm"]: r for r in _runs(tmp_path / "o") if r["seed"] == 0}
    assert "context:atlas" in by_arm["all"]["manifest"]["parts"]
    assert by_arm["no-system"]["manifest"]["parts"] == ["m1.p0"]
