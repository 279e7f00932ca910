"""The parts of a verdict row built from a tally's arrays and stats: the similarity, the
manifest check, the seed sets (lists, or bitmaps above ``SEED_LIST_MAX`` seeds) and the cost
reading. Pure: tallies and results in, record parts out.
"""

from __future__ import annotations

import numpy as np

from counterfact.probes.manifest import Application
from counterfact.probes.stats import ProbeStats, SimilarityStats
from counterfact.probes.tally import ArmTally
from counterfact.records.parts import ApplicationRecord, CostReadingRecord, SimilarityRecord
from counterfact.records.seedsets import SEED_LIST_MAX, pack
from counterfact.verdicts.cost import CostReading
from counterfact.verdicts.judgement import SeedSets


def similarity_record(stats: SimilarityStats | None) -> SimilarityRecord | None:
    """The record form of similarity stats (read off their attributes)."""
    return None if stats is None else SimilarityRecord.model_validate(stats)


def app_record(app: Application) -> ApplicationRecord:
    """The manifest check as recorded (an absent observation is left out, not null)."""
    mismatches = []
    for m in app.mismatches:
        row = {"facet": m.facet, "declared": m.declared}
        if m.observed_present:
            row["observed"] = m.observed
        mismatches.append(row)
    return ApplicationRecord(
        checked=app.checked,
        applied=app.applied,
        manifests_seen=app.manifests_seen,
        mismatches=mismatches,
        mismatches_omitted=app.mismatches_omitted,
        manifests_mismatched=app.manifests_mismatched,
    )


def seed_sets(
    tally: ArmTally, seeds: list[int], stats: ProbeStats | None, samples: int
) -> SeedSets:
    """The record's seed sets: lists, or bitmaps above SEED_LIST_MAX declared seeds. ``seeds``
    are the judged ones; a seed whose run ran and failed, or whose output could not be compared
    in time, is failed; one without a record was never run (missing).
    """
    seen = tally.seen[:samples]
    broken = (seen & ~tally.ok[:samples]) | tally.comparison_failed[:samples]
    failed = [int(s) for s in np.flatnonzero(broken)]
    missing = [int(s) for s in np.flatnonzero(~seen)]
    flipped = list(stats.flipped_seeds) if stats is not None else None
    if samples <= SEED_LIST_MAX:
        sims = list(stats.similarities) if stats is not None else None
        return SeedSets(
            seeds=seeds,
            failed_seeds=failed,
            missing_seeds=missing,
            flipped_seeds=flipped,
            similarities=sims,
        )
    return SeedSets(
        seeds=None,
        failed_seeds=None,
        missing_seeds=None,
        flipped_seeds=None,
        similarities=None,
        seeds_bits=pack(seeds, samples),
        failed_seeds_bits=pack(failed, samples),
        missing_seeds_bits=pack(missing, samples),
        flipped_seeds_bits=pack(flipped, samples) if flipped is not None else None,
        similarities_omitted=stats is not None,
    )


def reading_record(
    reading: CostReading | None, stats: ProbeStats | None
) -> CostReadingRecord | None:
    """The ablation's cost reading as recorded (None without one)."""
    if reading is None:
        return None
    key = stats.cost.get(reading.key) if stats is not None and stats.cost else None
    return CostReadingRecord(
        key=reading.key,
        saved=reading.saved,
        consistent=reading.consistent,
        stable=reading.stable,
        cost_cause=reading.cost_cause,
        placebo_band=list(reading.placebo),
        placebo_max=max(reading.placebo) if reading.placebo else None,
        reported=key.reported if key is not None else 0,
    )
