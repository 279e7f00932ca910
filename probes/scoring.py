"""Scoring run records against a reference: the flips and similarities of one probe."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from counterfact.exceptions import ComparisonFailed
from counterfact.probes.comparators import Comparator, prepare_batch
from counterfact.probes.similarity import Similarity
from counterfact.probes.stats import ProbeStats, summarize_probe
from counterfact.probes.tally import comparison_doubt
from counterfact.records.runs import RunRecord
from counterfact.records.vocabulary import DoubtCode

TimedOut = Callable[[RunRecord, DoubtCode, str], None]
"""Told each run whose output could not be compared: the doubt code that says how, and the
failure's message."""


def score_runs(
    runs: Sequence[RunRecord],
    reference: str,
    comparator: Comparator,
    similarity: Similarity,
    timed_out: TimedOut | None = None,
) -> ProbeStats:
    """Similarity and flips of successful runs against the reference.

    A run whose output the comparator could not compare (:class:`ComparisonFailed`: a deadline,
    a judge's reply that is no verdict, a judge that gave no answer) is left out, as a failed run
    is: its seed is not a sample, and ``timed_out`` is told the run, the doubt code and the
    message; any other :class:`~counterfact.exceptions.ScoringError` propagates.
    """
    outputs = [r.output or "" for r in runs]
    sims = similarity.score(reference, outputs)
    prepare_batch(comparator, reference, outputs, [r.arm for r in runs])  # the batch at once
    judged: list[tuple[RunRecord, bool, float]] = []
    for run, output, sim in zip(runs, outputs, sims, strict=True):
        try:
            judged.append((run, comparator.flipped(reference, output, sim), sim))
        except ComparisonFailed as exc:  # this output only: the others are judged
            if timed_out is not None:
                timed_out(run, comparison_doubt(exc), str(exc))
    return summarize_probe(
        [r.seed for r, _, _ in judged],
        [f for _, f, _ in judged],
        [s for _, _, s in judged],
        [r.cost for r, _, _ in judged],
    )


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
    timed_out: TimedOut | None = None,
) -> ProbeStats:
    """:func:`score_runs` when there is a reference, else :func:`unscored_stats`."""
    if reference is None:
        return unscored_stats(runs)
    return score_runs(runs, reference, comparator, similarity, timed_out)
