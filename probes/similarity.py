"""Similarity of outputs to the reference: a number in [0, 1], always reported.

Builtin ``text``: rapidfuzz's normalized Indel similarity,
``rapidfuzz.distance.Indel.normalized_similarity(reference, output)``, which equals
``1 - indel_distance / (len(reference) + len(output))`` (insertions and deletions only; the same
number as ``rapidfuzz.fuzz.ratio / 100``). It compares the raw strings: case, whitespace and
punctuation count. Two empty strings have similarity 1.

``embedding``: the cosine similarity of embeddings, clipped to [0, 1], from a user embedder
``embedder(texts: list[str]) -> vectors`` (one vector per text; a list of lists or a 2-D array),
or a sentence-transformers model named in the config (the resolver builds that embedder). The
reference is embedded once per reference text; outputs are embedded a batch at a time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

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
        from rapidfuzz.distance import Indel  # here: the config schema names this kind only

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


Embedder = Callable[[list[str]], Any]
"""Texts -> one vector per text (a list of lists of floats, or a 2-D numpy array)."""


@dataclass(frozen=True)
class EmbeddingSimilarity:
    """Cosine similarity of embeddings, clipped to [0, 1]."""

    embedder: Embedder
    name: str = "embedding"
    _references: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """Reference text -> its unit vector (each reference is embedded once)."""

    def score(self, reference: str, outputs: Sequence[str]) -> list[float]:
        """Cosine of each output's embedding with the reference's, clipped to [0, 1]."""
        if not outputs:
            return []
        if reference not in self._references:
            self._references[reference] = self._unit([reference])[0]
        vectors = self._unit(list(outputs))
        if vectors.shape[1] != self._references[reference].shape[0]:
            msg = (
                f"embedder returned vectors of size {vectors.shape[1]} for outputs but "
                f"{self._references[reference].shape[0]} for the reference; it must embed "
                "every text into the same space"
            )
            raise ScoringError(msg)
        cosine = vectors @ self._references[reference]
        return [min(max(float(c), 0.0), 1.0) for c in cosine]

    def _unit(self, texts: list[str]) -> Any:
        """The embedder's vectors for ``texts``, checked and scaled to length 1."""
        import numpy as np

        try:
            vectors = np.asarray(self.embedder(texts), dtype=float)
        except Exception as exc:
            name = (
                getattr(self.embedder, "__module__", "?")
                + ":"
                + getattr(self.embedder, "__qualname__", type(self.embedder).__name__)
            )
            msg = (
                f"embedder {name} raised {type(exc).__name__}: {exc} (while embedding "
                f"{len(texts)} text(s); every run is recorded — fix the embedder and resume)"
            )
            raise ScoringError(msg) from exc
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            msg = (
                f"embedder returned shape {vectors.shape} for {len(texts)} texts; return one "
                "vector per text (a list of lists, or a 2-D array)"
            )
            raise ScoringError(msg)
        norms = np.linalg.norm(vectors, axis=1)
        if not np.all(np.isfinite(vectors)) or np.any(norms == 0):
            msg = "embedder returned a zero or non-finite vector; cosine similarity is undefined"
            raise ScoringError(msg)
        return vectors / norms[:, None]


SIMILARITIES: Mapping[str, Kind[Similarity]] = {
    "text": Kind(lambda _: TextSimilarity()),
    "custom": Kind(
        lambda o: CustomSimilarity(o["target"]),
        takes=frozenset({"target"}),
        needs=frozenset({"target"}),
    ),
    "embedding": Kind(
        lambda o: EmbeddingSimilarity(o["embedder"]),
        takes=frozenset({"embedder", "model"}),
    ),
}
"""Similarity kinds by name: the config schema and the resolver read this one table."""
