"""Similarity of outputs to the reference: a number in [0, 1], always reported.

Builtin ``text``: rapidfuzz's normalized Indel similarity,
``rapidfuzz.distance.Indel.normalized_similarity(reference, output)``, which equals
``1 - indel_distance / (len(reference) + len(output))`` (insertions and deletions only; the same
number as ``rapidfuzz.fuzz.ratio / 100``). It compares the raw strings: case, whitespace and
punctuation count. Two empty strings have similarity 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from rapidfuzz.distance import Indel

from counterfact.exceptions import ScoringError
from counterfact.probes.registry import Kind


class Similarity(Protocol):
    """Scores each output against the reference."""

    @property
    def name(self) -> str:
        """The registry name, recorded with the scores."""
        ...

    def score(self, reference: str, outputs: Sequence[str]) -> list[float]:
        """One float in [0, 1] per output, in order (1 means the same as the reference)."""
        ...


@dataclass(frozen=True)
class TextSimilarity:
    """Normalized Indel similarity (rapidfuzz); see the module docstring."""

    name: str = "text"

    def score(self, reference: str, outputs: Sequence[str]) -> list[float]:
        """Normalized Indel similarity of each output to the reference."""
        return [float(Indel.normalized_similarity(reference, o)) for o in outputs]


@dataclass(frozen=True)
class CustomSimilarity:
    """A user callable ``target(reference, outputs) -> list of floats in [0, 1]``."""

    target: Callable[[str, list[str]], Sequence[float]]
    name: str = "custom"

    def score(self, reference: str, outputs: Sequence[str]) -> list[float]:
        """The user callable's scores, checked: one finite float in [0, 1] per output."""
        try:
            values = list(self.target(reference, list(outputs)))
        except Exception as exc:
            msg = f"custom similarity {self.target!r} raised {type(exc).__name__}: {exc}"
            raise ScoringError(msg) from exc
        if len(values) != len(outputs):
            msg = (
                f"custom similarity returned {len(values)} values for {len(outputs)} outputs; "
                "return one float per output, in order"
            )
            raise ScoringError(msg)
        checked: list[float] = []
        for i, value in enumerate(values):
            if isinstance(value, bool) or not isinstance(value, int | float):
                msg = f"custom similarity value {i} is {type(value).__name__}, not a float"
                raise ScoringError(msg)
            if not math.isfinite(value) or not 0.0 <= value <= 1.0:
                msg = f"custom similarity value {i} is {value!r}; values must lie in [0, 1]"
                raise ScoringError(msg)
            checked.append(float(value))
        return checked


SIMILARITIES: Mapping[str, Kind[Similarity]] = {
    "text": Kind(lambda _: TextSimilarity()),
    "custom": Kind(
        lambda o: CustomSimilarity(o["target"]),
        takes=frozenset({"target"}),
        needs=frozenset({"target"}),
    ),
}
"""Similarity kinds by name: the config schema and the resolver read this one table."""
