"""A stand-in model whose answer depends on its context: the planted passages make it answer
wrongly, and at a temperature above 0 it answers the other way on a share of seeds.

Used with :class:`tests.standin.StandIn` (``answer=``) by the blame tests and
``scripts/bench_blame.py``: the answer is a function of the request body alone, so every probe
of the same request and seed gets the same answer, as a seeded model would give.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

RIGHT = "The capital of Australia is Canberra."
WRONG = "The capital of Australia is Sydney."


def _text(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in body.get("messages", []))


def _draw(body: dict[str, Any]) -> float:
    """A uniform draw in [0, 1) seeded by the request's messages and seed."""
    key = json.dumps([body.get("messages"), body.get("seed")], sort_keys=True)
    digest = hashlib.sha256(key.encode()).digest()
    return int.from_bytes(digest[:8], "little") / 2**64


def context_model(
    planted: Sequence[str], *, need_all: bool = False, noise: float = 0.0
) -> Callable[[dict[str, Any]], str]:
    """The answer function: WRONG while the planted markers are in the context (any of them,
    or with ``need_all`` all of them), else RIGHT; flipped on a ``noise`` share of seeds when
    the request's temperature is above 0.
    """

    def answer(body: dict[str, Any]) -> str:
        text = _text(body)
        present = [marker in text for marker in planted]
        wrong = (all(present) if need_all else any(present)) if planted else True
        temperature = body.get("temperature", 1.0)
        if noise and temperature and _draw(body) < noise:
            wrong = not wrong
        return WRONG if wrong else RIGHT

    return answer


def recorded_call(
    passages: Sequence[str], *, temperature: float = 0.0, answer: str = WRONG
) -> dict[str, Any]:
    """A recorded call (``counterfact record``'s form) whose user message holds ``passages``,
    one a paragraph, then the question."""
    question = "Using the passages above, what is the capital of Australia?"
    return {
        "request": {
            "model": "stand-in",
            "temperature": temperature,
            "messages": [
                {"role": "system", "content": "You answer from the passages you are given."},
                {"role": "user", "content": "\n\n".join([*passages, question])},
            ],
        },
        "response": {"choices": [{"message": {"role": "assistant", "content": answer}}]},
        "status": 200,
        "started_at": "2026-12-04T00:00:00Z",
        "duration_s": 0.5,
    }


def passages(n: int, planted: dict[int, str]) -> list[str]:
    """``n`` filler passages, those at the keys of ``planted`` replaced by its texts."""
    found = [f"Passage {i}: the river {i} is {i + 3} km long." for i in range(n)]
    for i, text in planted.items():
        found[i] = text
    return found


MARK = "the capital moved to Sydney in 2021"
"""The wrong fact the blame-folder tests plant, one passage a call."""


def call_folder(folder: Path, n: int) -> Path:
    """``n`` recorded calls in ``folder`` (``000000.json`` ...), call ``i`` with :data:`MARK`
    planted in its passage ``i % 6`` of six.
    """
    folder.mkdir()
    for i in range(n):
        call = recorded_call(passages(6, {i % 6: f"Passage {i}: {MARK}."}))
        (folder / f"{i:06d}.json").write_text(json.dumps(call), encoding="utf-8")
    return folder


def blame_lines(out: Path) -> list[dict[str, object]]:
    """``out/blame.jsonl``, one dict a call."""
    return [json.loads(x) for x in (out / "blame.jsonl").read_text().splitlines()]
