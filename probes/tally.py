"""Streaming evidence: each (scenario, arm) keeps compact per-seed arrays, updated as runs arrive.

A sweep never needs every run record at once to judge it. A :class:`ScenarioTally` scores each
run against the scenario's reference as soon as that reference is known and keeps, per arm and
per seed, a few numbers (succeeded, flipped, similarity, each cost key) plus the manifest
check's running result; the record itself can then be dropped. Memory is bounded by
``arms x samples`` numbers per scenario, whatever the number of runs.

Each question is judged by its own check when it declares one (``expect``), else by the sweep's
comparator. The reference (rule 4) is the scenario's own when declared. Otherwise it is the
baseline's seed-0 output, which may arrive after other runs: those wait (in arrival order) until
the baseline's seed-0 record arrives — it is the first run of each scenario in plan order, so the
wait is short — and are then scored, or counted unscored when that run failed.

Scoring is batched (:data:`SCORE_BATCH` outputs per similarity call), so a similarity measure
that is cheaper per batch (embeddings) keeps its advantage.
"""

from __future__ import annotations

import bisect
import hashlib
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from counterfact.exceptions import ComparisonFailed, ScoringError
from counterfact.probes.arms import ArmSpec
from counterfact.probes.comparators import Comparator, normalize_text, prepare_batch
from counterfact.probes.manifest import Application, ManifestLog
from counterfact.probes.reference import Reference, resolve_reference
from counterfact.probes.scenarios import ScenarioSpec
from counterfact.probes.similarity import Similarity
from counterfact.probes.stats import ProbeStats, SimilarityStats, summarize_values
from counterfact.records.runs import RunRecord
from counterfact.records.vocabulary import DoubtCode

SCORE_BATCH = 256
"""Outputs per similarity call."""
FLIPPED_OUTPUTS = 100
"""Distinct flipped outputs (after normalization) counted per arm; flips with an output beyond
these are counted in :attr:`ArmTally.flipped_other`."""
OUTPUT_CHARS = 500
"""Characters of a flipped output kept (longer ones are cut, with an ellipsis)."""
SEEDS_PER_OUTPUT = 20
"""Seeds listed per distinct flipped output."""


RUN_FLAGS: tuple[tuple[DoubtCode, str, Callable[[RunRecord], bool]], ...] = (
    ("runs-retried", "retried_at", lambda r: r.attempts > 1),
    ("runs-from-cache", "cached_at", lambda r: r.from_cache),
    ("runs-lost-workers", "infra_at", lambda r: r.infra_retries > 0),
    ("text-escaped", "escaped_at", lambda r: r.text_escaped),
)
"""What makes a run a reason for doubt, by its record: the doubt, the :class:`ArmTally` array
that keeps it per seed, and the test (one place for verdict rows and culprit searches). A run
that waited on a rate limit and then ran is not among them: the wait changes when it ran, not
what it answered (it is counted in ``summary.json`` ``runs_rate_limited``; one that waited too
long failed, and counts as failed)."""


COMPARISON_DOUBTS: tuple[DoubtCode, ...] = (
    "comparison-timed-out",
    "judge-unparseable",
    "judge-unavailable",
)
"""Why an output could not be compared, in the order :attr:`ArmTally.uncompared` numbers them
(from 1)."""


def comparison_doubt(exc: ComparisonFailed) -> DoubtCode:
    """The doubt code of a failed comparison (its class's :attr:`~ComparisonFailed.doubt`)."""
    return next((c for c in COMPARISON_DOUBTS if c == exc.doubt), "comparison-timed-out")


def output_digest(text: str) -> int:
    """An 8-byte hash of an output (blake2b): equal outputs, equal digests."""
    raw = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(raw, "little")


def same_outputs(arm: ArmTally, base: ArmTally, seeds: int) -> bool | None:
    """Every seed both ran gives the same output on both (None: no seed did both)."""
    both = arm.ok[:seeds] & base.ok[:seeds]
    if not both.any():
        return None
    return bool((arm.digest[:seeds][both] == base.digest[:seeds][both]).all())


class ArmTally:
    """One (scenario, arm): per-seed arrays over seeds ``0..samples-1`` (other seeds ignored)."""

    def __init__(self, arm: ArmSpec, samples: int, capacity: int | None = None) -> None:
        self.arm = arm
        self.admitted = samples
        """Seeds admitted: ``0..admitted-1`` (a sequential sweep widens it wave by wave). Not
        the successful runs (``ProbeStats.scored``): a seed is admitted before it has run."""
        self.capacity = max(capacity or samples, samples)
        """Seeds the arrays hold; records of seeds between ``samples`` and this wait parked."""
        self.parked: dict[int, RunRecord] = {}
        """Records of seeds not admitted yet (run ahead of the window), by seed."""
        samples = self.capacity
        self.seen = np.zeros(samples, dtype=bool)
        """A record (successful or not) arrived for the seed."""
        self.ok = np.zeros(samples, dtype=bool)
        self.scored = np.zeros(samples, dtype=bool)
        self.flipped = np.zeros(samples, dtype=bool)
        self.similarity = np.full(samples, math.nan)
        self.costs: dict[str, np.ndarray[Any, np.dtype[np.float64]]] = {}
        self.retried_at = np.zeros(samples, dtype=bool)
        """The seed's run took more than one attempt (failed or not): the retry bias."""
        self.cached_at = np.zeros(samples, dtype=bool)
        """The seed's successful run came from the run cache (another sweep's)."""
        self.infra_at = np.zeros(samples, dtype=bool)
        """The seed's task was resubmitted after its worker or node died."""
        self.escaped_at = np.zeros(samples, dtype=bool)
        """The seed's run held text UTF-8 cannot encode, judged on its escaped form."""
        self.uncompared = np.zeros(samples, dtype=np.uint8)
        """Why the seed's output could not be compared (0: it was, or was not tried; else 1 +
        its code's place in :data:`COMPARISON_DOUBTS`): left unscored, as a failed run is
        (:class:`~counterfact.exceptions.ComparisonFailed`)."""
        self.uncompared_reasons: dict[DoubtCode, str] = {}
        """Each code's first message (the pattern and its deadline, the judge's reply ...)."""
        self.manifest_at = np.zeros(samples, dtype=bool)
        """The seed's successful run reported a manifest."""
        self.unreported_at = np.zeros(samples, dtype=bool)
        """The seed's manifest left a declared facet out (it did not report it)."""
        self.manifests = ManifestLog(arm.facets, arm.ablations)
        self.flipped_outputs: dict[str, list[int]] = {}
        """Normalized flipped output -> ``[count, seed, seed, ...]`` (the lowest seeds, capped)."""
        self.flipped_text: dict[str, str] = {}
        """Normalized flipped output -> the lowest seed's output with it (cut), as shown."""
        self.flipped_text_seed: dict[str, int] = {}
        self.flipped_other = 0
        """Flips whose output was not among the :data:`FLIPPED_OUTPUTS` distinct ones kept."""
        self.digest = np.zeros(samples, dtype=np.uint64)
        """A successful seed's output, as an 8-byte hash: an arm whose outputs equal the
        baseline's on every seed changed nothing the model saw."""

    @property
    def retried(self) -> int:
        """Runs that took more than one attempt (failed or not)."""
        return int(self.retried_at.sum())

    @property
    def from_cache(self) -> int:
        """Successful runs taken from the run cache."""
        return int(self.cached_at.sum())

    def accepts(self, record: RunRecord) -> bool:
        """True for the first record of an admitted seed (later duplicates are ignored)."""
        return 0 <= record.seed < self.admitted and not self.seen[record.seed]

    def park(self, record: RunRecord) -> bool:
        """Keep a record of a seed past the window for later; True when it was parked."""
        if self.admitted <= record.seed < self.capacity and record.seed not in self.parked:
            self.parked[record.seed] = record
            return True
        return False

    def widen(self, samples: int) -> list[RunRecord]:
        """Admit seeds up to ``samples`` (at most the capacity); return the parked records that
        are now admitted, in seed order, for the caller to add.
        """
        self.admitted = min(max(self.admitted, samples), self.capacity)
        due = sorted(s for s in self.parked if s < self.admitted)
        return [self.parked.pop(s) for s in due]

    def complete(self, seeds: int) -> bool:
        """A record (successful or not) arrived for every seed ``0..seeds-1``."""
        return seeds <= self.admitted and bool(self.seen[:seeds].all())

    def add(self, record: RunRecord) -> None:
        """Count a record whose seed :meth:`accepts`; scoring comes separately."""
        seed = record.seed
        self.seen[seed] = True
        for _, attr, flagged in RUN_FLAGS:  # a failed run is never from the cache
            getattr(self, attr)[seed] = flagged(record)
        if not record.ok:
            return
        self.ok[seed] = True
        self.digest[seed] = output_digest(record.output or "")
        self.manifest_at[seed] = record.manifest is not None
        for key, value in (record.cost or {}).items():
            column = self.costs.setdefault(key, np.full(self.capacity, math.nan))
            column[seed] = value
        found = self.manifests.add(seed, record.manifest)
        self.unreported_at[seed] = any(not m.observed_present for m in found)

    def score(self, seed: int, flipped: bool, similarity: float, output: str = "") -> None:
        """Record one successful run's comparison with the reference (and a flipped output)."""
        self.scored[seed] = True
        self.flipped[seed] = flipped
        self.similarity[seed] = similarity
        if flipped:
            self._count_flipped(seed, output)

    @property
    def comparison_failed(self) -> np.ndarray[Any, np.dtype[np.bool_]]:
        """Per seed: its output could not be compared (whatever the reason)."""
        return self.uncompared > 0

    def fail_comparison(self, seed: int, code: DoubtCode, reason: str) -> None:
        """The seed's comparison failed (``code`` says how): it stays unscored, and in doubt."""
        self.uncompared[seed] = COMPARISON_DOUBTS.index(code) + 1
        self.uncompared_reasons.setdefault(code, reason)

    def _count_flipped(self, seed: int, output: str) -> None:
        text = output if len(output) <= OUTPUT_CHARS else output[: OUTPUT_CHARS - 1] + "…"
        key = normalize_text(text)
        if key not in self.flipped_outputs and len(self.flipped_outputs) >= FLIPPED_OUTPUTS:
            self.flipped_other += 1
            return
        shown = self.flipped_text_seed.get(key)
        if shown is None or seed < shown:  # the lowest seed's text: the same in any arrival order
            self.flipped_text[key] = text
            self.flipped_text_seed[key] = seed
        entry = self.flipped_outputs.setdefault(key, [0])
        entry[0] += 1
        seeds = entry[1:]
        bisect.insort(seeds, seed)
        entry[1:] = seeds[:SEEDS_PER_OUTPUT]  # the lowest seeds, whatever order runs finished in

    def changed_to(self, top: int = 3) -> list[tuple[str, int, list[int]]]:
        """The ``top`` most common flipped outputs, the same once normalized counted together:
        (output as first seen, count, first seeds), most common first (ties by lowest seed).
        """
        ranked = sorted(self.flipped_outputs.items(), key=lambda kv: (-kv[1][0], min(kv[1][1:])))
        return [(self.flipped_text[k], e[0], sorted(e[1:])) for k, e in ranked[:top]]

    @property
    def seeds(self) -> list[int]:
        """Seeds of the successful runs, ascending."""
        return [int(s) for s in np.flatnonzero(self.ok)]

    def stats(self, *, scored: bool, upto: int | None = None) -> ProbeStats:
        """The probe's statistics; ``scored`` False counts successful seeds only (no reference);
        ``upto`` keeps seeds below it (a sequential challenger's share of its baseline).
        Scored, a successful seed whose comparison failed (timed out) is not a sample.
        """
        seeds = np.flatnonzero(self.ok[:upto] & self.scored[:upto] if scored else self.ok[:upto])
        sims = self.similarity[seeds] if scored else np.ones(len(seeds))
        flipped = seeds[self.flipped[seeds]] if scored else seeds[:0]
        costs = {k: col[seeds][~np.isnan(col[seeds])].tolist() for k, col in self.costs.items()}
        return ProbeStats(
            seeds=tuple(int(s) for s in seeds),
            flipped_seeds=tuple(int(s) for s in flipped),
            similarities=tuple(float(x) for x in sims),
            similarity=SimilarityStats.of([float(x) for x in sims]),
            cost=summarize_values(costs) if scored else None,
        )

    def application(self) -> Application:
        """The manifest check over every manifest seen (rule 6)."""
        return self.manifests.application()


class ScenarioTally:
    """Every arm of one scenario, fed run records in any order."""

    def __init__(
        self,
        scenario: ScenarioSpec,
        arms: Sequence[ArmSpec],
        baseline: str,
        samples: int,
        comparator: Comparator,
        similarity: Similarity,
        capacity: int | None = None,
    ) -> None:
        self.scenario = scenario
        self.baseline = baseline
        self.comparator = scenario.check(comparator)
        """The check that judges this question: its own ``expect``, else ``comparator``."""
        self.check_label = scenario.check_label(comparator)
        """That check in words, for the records (``sweep default: contains``)."""
        self.similarity = similarity
        self.arms: dict[str, ArmTally] = {a.id: ArmTally(a, samples, capacity) for a in arms}
        self.reference: Reference = resolve_reference(scenario.reference, [])
        self._decided = scenario.reference is not None
        """The reference question is settled (declared, taken, or seed 0 failed)."""
        self._queue: list[tuple[str, int, str]] = []
        """(arm, seed, output) accepted but not yet scored."""
        self._expected = sum(a.capacity for a in self.arms.values())
        self._accepted = 0
        self._error: ScoringError | None = None
        """A scoring failure, raised by :meth:`finish` (after every record is stored)."""
        self._stats: dict[tuple[str, int | None], ProbeStats] = {}
        """:meth:`stats` already computed, until the next record or score changes them."""

    def add(self, record: RunRecord) -> None:
        """Take one run record of this scenario (records of unknown arms are ignored)."""
        tally = self.arms.get(record.arm)
        if tally is None or tally.park(record) or not tally.accepts(record):
            return
        tally.add(record)
        self._stats.clear()
        self._accepted += 1
        if record.arm == self.baseline and record.seed == 0 and not self._decided:
            self.reference = resolve_reference(None, [record])
            self._decided = True
        if record.ok:
            self._queue.append((record.arm, record.seed, record.output or ""))
        full = len(self._queue) >= SCORE_BATCH or self._accepted >= self._expected
        if self._decided and (self.reference.text is None or full):
            self.flush()

    def flush(self) -> None:
        """Score every queued output now (a sequential look needs its seeds scored)."""
        reference, queued = self.reference.text, self._queue
        self._queue = []
        self._stats.clear()
        if reference is None or self._error is not None:
            return  # nothing to score against (the runs stay counted, unscored), or failed
        try:
            outputs = [output for _, _, output in queued]
            sims = self.similarity.score(reference, outputs)
            arms = [arm for arm, _, _ in queued]  # a judge asks for all at once
            prepare_batch(self.comparator, reference, outputs, arms)
            for (arm, seed, output), sim in zip(queued, sims, strict=True):
                try:
                    flipped = self.comparator.flipped(reference, output, sim)
                except ComparisonFailed as exc:  # this output only: the others are judged
                    self.arms[arm].fail_comparison(seed, comparison_doubt(exc), str(exc))
                    continue
                self.arms[arm].score(seed, flipped, sim, output)
        except ScoringError as exc:
            self._error = exc

    @property
    def scoring_failed(self) -> bool:
        """A comparator or similarity measure failed (raised by :meth:`finish`)."""
        return self._error is not None

    def widen(self, arm: str, samples: int) -> None:
        """Admit ``arm``'s seeds up to ``samples``, adding the records that were parked."""
        for record in self.arms[arm].widen(samples):
            self.add(record)

    def finish(self) -> ScenarioTally:
        """Score what is still queued; call once every record has been added.

        Raises:
            ScoringError: a comparator or similarity measure failed on some output (raised here,
                after every run is recorded, not while runs stream in).
        """
        if not self._decided:
            self._decided = True  # baseline seed 0 never arrived: no reference
        self.flush()
        if self._error is not None:
            raise self._error
        return self

    def stats(self, arm: str, upto: int | None = None) -> ProbeStats | None:
        """The arm's statistics (seeds below ``upto``), or None when there is no reference to
        score against.
        """
        if self.reference.text is None:
            return None
        tally = self.arms[arm]
        key = (arm, None if upto is None or upto >= len(tally.ok) else upto)
        found = self._stats.get(key)
        if found is None:
            found = self._stats[key] = tally.stats(scored=True, upto=upto)
        return found


def tally_runs(
    scenario: ScenarioSpec,
    arms: Sequence[ArmSpec],
    baseline: str,
    runs: Sequence[RunRecord],
    samples: int,
    comparator: Comparator,
    similarity: Similarity,
) -> ScenarioTally:
    """A finished tally of ``runs`` (any order), for callers that hold the records anyway."""
    tally = ScenarioTally(scenario, arms, baseline, samples, comparator, similarity)
    for run in sorted(runs, key=lambda r: r.seed):
        tally.add(run)
    return tally.finish()
