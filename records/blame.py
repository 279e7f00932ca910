"""What ``counterfact blame`` writes: ``blame.json`` per call, ``blame.jsonl`` over many."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from counterfact.records.bisect import BisectRecord
from counterfact.records.execution import ExecutionRecord
from counterfact.records.parts import _Record
from counterfact.records.vocabulary import BisectReason, BisectVerdict

BLAME_SCHEMA_VERSION: Literal[2] = 2
"""2: the search's counts, spend and ending moved into ``execution`` (``bisect.json`` version
10), and a ``blame.jsonl`` line carries that record whole instead of ``runs_used``; older files
still load."""


class PartRecord(_Record):
    """One part of the recorded call's messages."""

    id: str
    """``m<i>``, ``m<i>.p<j>`` or ``m<i>.s<j>``."""
    message: int
    """The index of its message, in the order sent."""
    role: str
    text: str
    chars: int
    """Its length in characters."""
    suspect: bool
    """Searched by the bisection (the question and ``--keep`` parts are not)."""


class ReplayRecord(_Record):
    """Whether the replay reproduces the recorded answer, before anything is removed."""

    reproduced: int
    """Baseline seeds whose answer held (judged as the search judges)."""
    seeds: int
    """Baseline seeds that ran."""
    recorded_answer: str | None
    """The recorded reply's text; None when only the request was recorded."""


class RankRecord(_Record):
    """How the suspects were ordered before the search (a prior, not evidence)."""

    method: Literal["lexical", "given", "loo", "surrogate"]
    order: list[str]
    probes: int = 0
    """Probes the ranking spent before the search (``loo``, ``surrogate``), beside the
    search's own ``probes_executed``; 0 when it ran none (the baseline did not hold, or the pass
    would have taken more than half of ``--max-probes``)."""


class BlameRecord(BisectRecord):
    """``blame.json``: the culprit search's record (every ``bisect.json`` field) with the call
    it explains.
    """

    blame_schema_version: Literal[1, 2] = BLAME_SCHEMA_VERSION
    call: str
    """The call's name (its file's stem, its line, or its span id)."""
    source: str
    """Where the call was read from."""
    model: str
    """The model the call asked for (and the replay asked for again)."""
    parts: list[PartRecord]
    """Every part of the call's messages, in the order sent."""
    expect: str | None = None
    """``--expect``: the answer it should have given (a part is to blame when removing it makes
    the answer right); None: a part is to blame when removing it changes the recorded answer."""
    seeds_vary: bool | None = None
    """Whether the baseline's replies differed across seeds (None: not known)."""
    replay: ReplayRecord
    rank: RankRecord

    def text_of(self, part: str) -> str:
        """A part's text; a whole message's (``m2``) is its parts' joined by blank lines."""
        if part.startswith("context:"):  # a passage's id names only itself
            found = [p.text for p in self.parts if p.id == part]
        else:
            found = [p.text for p in self.parts if p.id == part or p.id.startswith(part + ".")]
        return "\n\n".join(found)


class BlameLine(_Record):
    """One line of ``blame.jsonl``: one call's outcome, when many calls are blamed."""

    call: str
    verdict: BisectVerdict | None
    """None when the call could not be blamed (``error`` says why)."""
    reason: BisectReason | None
    error: str | None = None
    """Why the call could not be replayed (a refused call, a failed search); None otherwise."""
    record: str | None = None
    """Its ``blame.json``, relative to the run directory."""
    culprits: list[list[str]] = Field(default_factory=list)
    culprit_text: list[list[str]] = Field(default_factory=list)
    """Each culprit part's text, clipped, set by set."""
    probes_executed: int = 0
    execution: ExecutionRecord | None = None
    """What the call's search ran and spent, as its ``blame.json`` says (``runs_used`` at the
    top level of older lines); None when the call could not be blamed."""
    seeds_vary: bool | None = None

    @model_validator(mode="before")
    @classmethod
    def _older(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "runs_used" not in data:
            return data
        rest = {k: v for k, v in data.items() if k != "runs_used"}
        if rest.get("error") is not None or rest.get("verdict") is None:
            return rest
        return rest | {"execution": {"runs_used": data["runs_used"]}}
