"""The null band: the baseline's own seed-to-seed spread of similarity (rule 5)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from counterfact.probes.stats import SimilarityStats


@dataclass(frozen=True)
class NullBand:
    """How far the baseline drifts from the reference on its own."""

    floor: float
    """The baseline's minimum similarity to the reference."""
    degenerate: bool
    """All baseline similarities are equal (compared as values, not a float stdev of 0)."""
    gates: bool
    """True only when the flip comparator is the similarity comparator (same instrument)."""
    similarity: SimilarityStats
    """The baseline's similarity summary the band was built from."""

    def outside(self, mean_similarity: float) -> bool:
        """A challenger is outside the band iff its mean similarity is strictly below the floor."""
        return mean_similarity < self.floor


def build_null_band(baseline_similarities: Sequence[float], *, gates: bool) -> NullBand | None:
    """Build the band from the baseline's similarities; None when the baseline has none."""
    stats = SimilarityStats.of(baseline_similarities)
    if stats is None:
        return None
    first = baseline_similarities[0]
    return NullBand(
        floor=stats.min,
        degenerate=all(s == first for s in baseline_similarities),
        gates=gates,
        similarity=stats,
    )
