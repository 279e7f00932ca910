"""rule 2 (majority) and the probe summaries."""

from __future__ import annotations

import statistics

import pytest

from counterfact.probes.stats import (
    SimilarityStats,
    probe_flipped,
    summarize_costs,
    summarize_probe,
)


@pytest.mark.parametrize(
    ("flips", "scored", "flipped"),
    [(2, 3, True), (1, 3, False), (2, 4, False), (3, 4, True), (1, 2, False), (2, 2, True)],
)
def test_majority_rule_tie_is_not_a_flip(flips: int, scored: int, flipped: bool) -> None:
    assert probe_flipped(flips, scored) is flipped


def test_similarity_stdev_is_population() -> None:
    values = [0.2, 0.5, 0.9]
    stats = SimilarityStats.of(values)
    assert stats is not None
    # Reference: the standard library's population stdev (not the sample stdev).
    assert stats.stdev == pytest.approx(statistics.pstdev(values))
    assert stats.stdev != pytest.approx(statistics.stdev(values))
    assert (stats.mean, stats.min, stats.max) == (pytest.approx(0.5333333), 0.2, 0.9)


def test_probe_is_sorted_by_seed_and_counts_flips() -> None:
    probe = summarize_probe([2, 0, 1], [True, False, True], [0.1, 0.9, 0.2], [None, None, None])
    assert probe.seeds == (0, 1, 2)
    assert probe.flipped_seeds == (1, 2)
    assert probe.similarities == (0.9, 0.2, 0.1)
    assert (probe.scored, probe.flips, probe.flipped) == (3, 2, True)


def test_costs_use_runs_that_reported_each_key() -> None:
    costs = summarize_costs(
        [{"tokens": 10.0, "usd": 1.0}, {"tokens": 30.0}, None, {"tokens": 20.0}]
    )
    assert costs is not None
    assert costs["tokens"].median == 20.0
    assert (costs["usd"].median, costs["usd"].reported) == (1.0, 1)
    assert summarize_costs([None, None]) is None
