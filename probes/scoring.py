"""Scoring run records against a reference: the flips and similarities of one probe."""

from __future__ import annotations

from collections.abc import Sequence

from counterfact.probes.comparators import Comparator
from counterfact.probes.records import RunRecord
from counterfact.probes.similarity import Similarity
from counterfact.probes.stats import ProbeStats, summarize_probe


def score_runs(
    runs: Sequence[RunRecord], reference: str, comparator: Comparator, similarity: Similarity
) -> ProbeStats:
    """Similarity and flips of successful runs against the reference."""
    outputs = [r.output or "" for r in runs]
    sims = similarity.score(reference, outputs)
    flipped = [comparator.flipped(reference, o, s) for o, s in zip(outputs, sims, strict=True)]
    return summarize_probe([r.seed for r in runs], flipped, sims, [r.cost for r in runs])


def unscored_stats(runs: Sequence[RunRecord]) -> ProbeStats:
    """Stats that only count successful seeds, for when there is no reference to score against.

    Only reached when the baseline's seed 0 failed, so the runs-failed tier decides first and the
    zero flips here are never read as evidence (the record shows flips as null).
    """
    n = len(runs)
    return summarize_probe([r.seed for r in runs], [False] * n, [1.0] * n, [None] * n)


def score_or_count(
    runs: Sequence[RunRecord],
    reference: str | None,
    comparator: Comparator,
    similarity: Similarity,
) -> ProbeStats:
    """:func:`score_runs` when there is a reference, else :func:`unscored_stats`."""
    if reference is None:
        return unscored_stats(runs)
    return score_runs(runs, reference, comparator, similarity)
