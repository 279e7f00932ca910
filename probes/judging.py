"""A comparator that asks a model whether an output gives the reference's answer: the pure half
(the judge itself, which calls the model, is built by the orchestrator and injected).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol


class Judge(Protocol):
    """A model that judges outputs against a reference (built by the orchestrator)."""

    def prepare(
        self, reference: str, outputs: list[str], arms: Sequence[str] | None = None
    ) -> None:
        """Judge a batch now (concurrently, from its cache first), for :meth:`same` to read;
        ``arms``: the arm each output is from (a call is charged to the arm that asked it).
        """
        ...

    def same(self, reference: str, output: str) -> bool:
        """True when ``output`` gives the reference's answer (or meets the rubric).

        Raises:
            JudgeUnparseable: the judge's reply was not a verdict (this output only).
            JudgeUnavailable: the judge refused this output, or gave no answer through its
                retries (this output only).
            ScoringError: the judge could not be asked at all (unreachable, key rejected,
                unknown model, out of credit).
        """
        ...

    def describe(self) -> str:
        """``judged by <model>`` (with its rubric, cut)."""
        ...

    def options(self) -> dict[str, Any]:
        """The settings that make it this judge (model, endpoint, rubric, prompt), JSON data."""
        ...


@dataclass(frozen=True)
class JudgeComparator:
    """Flipped iff the judge says the output does not give the reference's answer."""

    judge: Judge
    kind: str = "judge"
    answer_level: bool = True

    def describe(self) -> str:
        """The judge's words (``judged by gpt-4o-mini``)."""
        return self.judge.describe()

    def prepare(
        self, reference: str, outputs: list[str], arms: Sequence[str] | None = None
    ) -> None:
        """Have the judge judge a batch of outputs at once (its calls run concurrently);
        ``arms``: the arm of each output, which its call is charged to.
        """
        self.judge.prepare(reference, outputs, arms)

    def flipped(self, reference: str, output: str, similarity: float) -> bool:
        """True iff the judge says DIFFERENT (a reply that is no verdict raises)."""
        return not self.judge.same(reference, output)

    def options(self) -> dict[str, Any]:
        """The judge's settings."""
        return self.judge.options()
