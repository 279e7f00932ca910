"""Per-probe statistics: samples, flips, similarity and cost summaries (rule 2)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SimilarityStats:
    """Mean, min, max and *population* standard deviation of a probe's similarities."""

    mean: float
    min: float
    max: float
    stdev: float

    @classmethod
    def of(cls, values: Sequence[float]) -> SimilarityStats | None:
        """Summarise ``values``; None when there are none."""
        if not values:
            return None
        arr = np.asarray(values, dtype=float)
        # numpy's mean and std spelled out (the same operations, so the same floats) without
        # their wrappers' overhead, which dominates on a few seeds
        mean = arr.sum() / len(arr)
        deviations = arr - mean
        return cls(
            mean=float(mean),
            min=float(arr.min()),
            max=float(arr.max()),
            stdev=float(np.sqrt((deviations * deviations).sum() / len(arr))),
        )


@dataclass(frozen=True)
class CostStats:
    """Median, min and max of one cost key over the runs that reported it."""

    median: float
    min: float
    max: float
    reported: int
    """How many runs reported this key."""


@dataclass(frozen=True)
class ProbeStats:
    """N seeded runs of one configuration, summarised."""

    seeds: tuple[int, ...]
    """Seeds of the successful runs, ascending; failed runs are not samples."""
    flipped_seeds: tuple[int, ...]
    similarities: tuple[float, ...]
    """Similarity to the reference per successful seed, in seed order."""
    similarity: SimilarityStats | None
    cost: Mapping[str, CostStats] | None
    """Per cost key, over runs that reported it; None when no run reported cost."""

    @property
    def scored(self) -> int:
        """Successful runs the probe rests on: scored against the reference when the stats were
        built with ``scored=True``, merely successful without a reference (a record's
        ``samples``; the word alone means the seeds a sweep declares).
        """
        return len(self.seeds)

    @property
    def flips(self) -> int:
        """Runs whose output flipped."""
        return len(self.flipped_seeds)

    @property
    def stable(self) -> bool:
        """Rule 3, the zero-tolerance gate: a baseline is stable iff no seed flipped."""
        return baseline_stable(self.flips)

    @property
    def flipped(self) -> bool:
        """Rule 2, the majority rule: ``flips * 2 > scored`` (a tie is not a flip)."""
        return probe_flipped(self.flips, self.scored)


def probe_flipped(flips: int, scored: int) -> bool:
    """The majority rule: a probe flipped iff more than half its scored runs flipped."""
    return flips * 2 > scored


def baseline_stable(flips: int) -> bool:
    """The zero-tolerance baseline gate (rule 3): stable iff it flipped on no seed."""
    return flips == 0


def summarize_costs(costs: Sequence[Mapping[str, float] | None]) -> dict[str, CostStats] | None:
    """Median/min/max per cost key over the runs that reported that key."""
    by_key: dict[str, list[float]] = {}
    for cost in costs:
        for key, value in (cost or {}).items():
            by_key.setdefault(key, []).append(value)
    return summarize_values(by_key)


def summarize_values(by_key: Mapping[str, Sequence[float]]) -> dict[str, CostStats] | None:
    """Median/min/max per cost key of the values given (keys with no value are left out)."""
    present = {key: values for key, values in by_key.items() if len(values)}
    if not present:
        return None
    return {
        key: CostStats(
            median=float(np.median(values)),
            min=float(np.min(values)),
            max=float(np.max(values)),
            reported=len(values),
        )
        for key, values in sorted(present.items())
    }


def summarize_probe(
    seeds: Sequence[int],
    flipped: Sequence[bool],
    similarities: Sequence[float],
    costs: Sequence[Mapping[str, float] | None],
) -> ProbeStats:
    """Build :class:`ProbeStats` from per-run values given in the same (seed) order."""
    if not len(seeds) == len(flipped) == len(similarities) == len(costs):
        msg = "seeds, flipped, similarities and costs must have one entry per run"
        raise ValueError(msg)
    order = sorted(range(len(seeds)), key=lambda i: seeds[i])
    sims = tuple(similarities[i] for i in order)
    return ProbeStats(
        seeds=tuple(seeds[i] for i in order),
        flipped_seeds=tuple(seeds[i] for i in order if flipped[i]),
        similarities=sims,
        similarity=SimilarityStats.of(sims),
        cost=summarize_costs([costs[i] for i in order]),
    )
