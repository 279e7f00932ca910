"""Orders the suspects before a culprit search: a prior, never a claim (rule 10).

The order decides only how soon the search meets a culprit, so how many probes it spends; the
claim rests on the probes' reruns alone. :func:`lexical` is free: parts that share more words
with the answer being explained come first (a passage that says "Sydney" when the answer is
"Sydney"). A culprit that shares no word with the answer is still found, later.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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
