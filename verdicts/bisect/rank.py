"""Orders the suspects before a culprit search: a prior, never a claim (rule 10).

The order decides only how soon the search meets a culprit, so how many probes it spends; the
claim rests on the probes' reruns alone. :func:`lexical` is free: parts that share more words
with the answer being explained come first (a passage that says "Sydney" when the answer is
"Sydney"). A culprit that shares no word with the answer is still found, later.

Two orders spend probes first, all at once: :func:`by_rate` orders by each part's flip rate when
removed alone (leave-one-out), and :func:`surrogate` by the weights of a non-negative linear fit
of the flip rate on which parts m random ablations removed (a ContextCite-style surrogate:
Cohen-Wang et al., "ContextCite: Attributing Model Generation to Context", NeurIPS 2024, fit
there with a Lasso; here by non-negative least squares, ``scipy.optimize.nnls``, since removing
a cause can only raise the flip rate). Their probes are ordinary probes: the search reads them
back instead of rerunning them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from scipy.optimize import nnls

from counterfact.probes.comparators import normalize_text

_STOP = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "will",
        "with",
    }
)


def _words(text: str) -> set[str]:
    return {w for w in normalize_text(text).split() if w not in _STOP}


def lexical(texts: Mapping[str, str], order: Sequence[str], target: str) -> list[str]:
    """``order`` re-ranked by how many of ``target``'s words each suspect's text holds (ties,
    and suspects sharing none, keep their order).
    """
    wanted = _words(target)
    score = {s: len(_words(texts.get(s, "")) & wanted) for s in order}
    position = {s: i for i, s in enumerate(order)}
    return sorted(order, key=lambda s: (-score[s], position[s]))


def by_rate(order: Sequence[str], rates: Sequence[float]) -> list[str]:
    """``order`` by ``rates`` (one per suspect), highest first; ties keep their order."""
    position = {s: i for i, s in enumerate(order)}
    rate = dict(zip(order, rates, strict=True))
    return sorted(order, key=lambda s: (-rate[s], position[s]))


def random_ablations(n: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """``m`` distinct masks over ``n`` suspects (True: removed), each suspect removed with
    probability 1/2, none empty (fewer than ``m`` when ``n`` is small).
    """
    found: dict[bytes, np.ndarray] = {}
    for _ in range(20 * m):
        row = rng.random(n) < 0.5
        if row.any():
            found.setdefault(row.tobytes(), row)
        if len(found) == m:
            break
    return np.array(list(found.values()), dtype=bool).reshape(-1, n)


def surrogate(order: Sequence[str], masks: np.ndarray, rates: Sequence[float]) -> list[str]:
    """``order`` by the non-negative weights of ``rate ~ intercept + masks @ w`` (the intercept
    taken as the lowest rate seen, so a cause present everywhere is not credited to it).
    """
    y = np.asarray(rates, dtype=float)
    weights, _ = nnls(masks.astype(float), y - y.min())
    return by_rate(order, weights.tolist())
