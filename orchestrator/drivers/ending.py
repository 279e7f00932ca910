"""How a session's work ended (:class:`Ending`), and what its failure watch sees
(:class:`Watched`): the values a driver and its :class:`~.session.Session` pass each other.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from counterfact.records.execution import Status

EndingKind = Literal["done", "aborted", "interrupted", "all-failed", "budget"]
_STATUS: dict[EndingKind, Status] = {
    "done": "complete",
    "aborted": "failed",
    "interrupted": "interrupted",
    "all-failed": "failed",
    "budget": "budget-exhausted",
}


@dataclass(frozen=True)
class Ending:
    """How a session's work ended, and what its records say about it."""

    kind: EndingKind
    failure: str | None = None
    """Why it failed (``aborted``, ``all-failed``), in one line."""

    @property
    def status(self) -> Status:
        """The records' ``status``: complete, failed, interrupted or budget-exhausted."""
        return _STATUS[self.kind]

    @property
    def judged(self) -> bool:
        """True when the runs are judged (an aborted or interrupted sweep records no verdicts)."""
        return self.kind in ("done", "all-failed", "budget")


@dataclass(frozen=True)
class Watched:
    """What the failure watch sees: the planned scenarios and arms, and the baseline."""

    scenarios: tuple[str, ...]
    arms: tuple[str, ...]
    baseline: str


def watched(scenarios: Iterable[str], arms: Iterable[str], baseline: str) -> Watched:
    """What the failure watch of a session sees."""
    return Watched(tuple(scenarios), tuple(arms), baseline)
