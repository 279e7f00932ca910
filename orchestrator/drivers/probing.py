"""Running the probes a culprit search asks for: each probe is the baseline plus a set of ablated
suspects, run on every seed; the search reads back their statistics.

Every probe keeps the baseline's facets, so every probe's manifests are checked against them as
a sweep checks an arm's (rule 6). A failed check — a manifest that reports another value, or
leaves a declared facet out — stops the search after the probes that showed it
(:class:`ManifestCheckFailed`): their flips are not evidence about the ablations.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from counterfact.orchestrator.config.resolve import ResolvedBisect
from counterfact.orchestrator.drivers.session import Session
from counterfact.orchestrator.engine.sourcing.source import Planned
from counterfact.probes.arms import ArmSpec
from counterfact.probes.manifest import Application, ManifestLog
from counterfact.probes.reference import Reference, resolve_reference
from counterfact.probes.runner import RunContext
from counterfact.probes.scoring import score_or_count
from counterfact.probes.stats import ProbeStats
from counterfact.records.runs import RunRecord
from counterfact.records.vocabulary import DoubtCode
from counterfact.verdicts.applied import check_failed
from counterfact.verdicts.bisect.ddmin import Curtail
from counterfact.verdicts.standing import SearchManifests


class ManifestCheckFailed(Exception):
    """Internal: the probes' manifests did not show the baseline's declared facets; the driver
    ends the search inconclusive (it never reaches the caller).
    """

    def __init__(self, application: Application) -> None:
        super().__init__("the probes' manifests do not show the baseline's declared facets")
        self.application = application


def probe_arm(base: ArmSpec, ids: Sequence[str]) -> ArmSpec:
    """The arm of one probe: the baseline plus the ablated ids; its id is ``ablate:`` and the
    sorted ids as a JSON list, which no two different sets share.
    """
    if not ids:
        return base
    return ArmSpec(
        id="ablate:" + json.dumps(sorted(ids), separators=(",", ":")),
        facets=dict(base.facets),
        ablations=(*base.ablations, *sorted(ids)),
        restorations=base.restorations,
    )


class ProbeRunner:
    """The search's ``run_probes`` callback; keeps every finished probe and the reference."""

    def __init__(self, bisect: ResolvedBisect, session: Session) -> None:
        self.bisect = bisect
        self.session = session
        self.source = session.source
        self.log = session.log
        self.reference: Reference = resolve_reference(bisect.scenario.reference, [])
        """Declared (``prior-run``), or set from the baseline probe's seed 0 when it finishes."""
        self.done: list[tuple[tuple[str, ...], ProbeStats]] = []
        """Every probe finished so far, in order (kept for an interrupted outcome)."""
        self._manifests = ManifestLog(bisect.base.facets)
        self._runs = 0
        self._lacking: list[tuple[str, int]] = []
        self._unreported: list[tuple[str, int]] = []
        self.uncompared: dict[DoubtCode, list[tuple[str, int]]] = {}
        """(probe, seed) of each run whose output could not be compared, by the doubt code that
        says how (a deadline, a judge's reply that is no verdict, a judge that gave no answer):
        not a sample of its probe, as a failed run is not."""
        self.uncompared_reasons: dict[DoubtCode, str] = {}
        """Each code's first message (the doubt says it)."""
        self.order: list[str] = []
        """The suspects in the order the search took them (set once ranked)."""
        self.ranking = 0
        """Probes the ranking pass spent before the search (``bisect.rank``)."""
        self.removal: Application | None = None
        """The check of a probe whose manifests still listed a part it removed (it stopped the
        search); None when every removal took effect."""
        self.early: set[tuple[str, ...]] = set()
        """Probes (at seed 0) that stopped before their last seed (``bisect.stop_early``)."""

    def __call__(
        self,
        keys: Sequence[tuple[str, ...]],
        first_seed: int = 0,
        curtail: Curtail | None = None,
    ) -> list[ProbeStats]:
        """Run each key's probe (all their seeds at once) and return their statistics; seeds
        ``first_seed..first_seed+samples-1`` (a confirmation on fresh seeds starts later).

        With ``curtail`` (``bisect.stop_early``) each probe draws its seeds in waves, as many
        at a time as ``curtail`` asks for, and stops when it asks for none
        (:mod:`~counterfact.verdicts.bisect.curtail`); the keys' waves run together.
        """
        arms = [probe_arm(self.bisect.base, key) for key in keys]
        seeds = tuple(range(first_seed, first_seed + self.bisect.sweep.samples))
        if curtail is None:
            by_arm = self._records(arms, {a.id: seeds for a in arms})
        else:
            by_arm = self._waves(keys, arms, seeds, curtail)
        stats = [self._score(key, by_arm[arm.id]) for key, arm in zip(keys, arms, strict=True)]
        if first_seed == 0:
            self.done.extend(zip(keys, stats, strict=True))
        for records in by_arm.values():
            self._check(records)
        if check_failed(app := self._manifests.application()):
            raise ManifestCheckFailed(app)
        for arm in arms:
            self._removed(arm, by_arm[arm.id])
        return stats

    def _removed(self, arm: ArmSpec, records: list[RunRecord]) -> None:
        """A probe whose manifests list the ``parts`` they sent must not list one it removed
        (the chat runner's do): a removal that did not happen stops the search (rule 9).
        """
        if not arm.ablations:
            return
        log = ManifestLog({}, arm.ablations)
        for r in records:
            if r.ok:
                log.add(r.seed, r.manifest)
        if check_failed(app := log.application()):
            self.removal = app
            raise ManifestCheckFailed(app)

    def _check(self, records: list[RunRecord]) -> None:
        """Check each successful run's manifest against the baseline's facets (rule 6)."""
        for r in records:
            if not r.ok:
                continue
            self._runs += 1
            if r.manifest is None:
                self._lacking.append((r.arm, r.seed))
            found = self._manifests.add(r.seed, r.manifest)
            if any(not m.observed_present for m in found):
                self._unreported.append((r.arm, r.seed))

    def manifests(self) -> SearchManifests:
        """The manifest check over every probe run so far, with its witnesses."""
        return SearchManifests(
            application=self.removal or self._manifests.application(),
            declared=bool(self.bisect.base.facets),
            runs=self._runs,
            lacking=tuple(self._lacking),
            unreported=tuple(self._unreported),
        )

    def _waves(
        self,
        keys: Sequence[tuple[str, ...]],
        arms: Sequence[ArmSpec],
        seeds: tuple[int, ...],
        curtail: Curtail,
    ) -> dict[str, list[RunRecord]]:
        """Each key's runs, drawn in the waves ``curtail`` asks for (every open key's wave at
        once); a probe with a failed or uncompared run draws all its seeds.
        """
        by_arm: dict[str, list[RunRecord]] = {a.id: [] for a in arms}
        drawn = dict.fromkeys(by_arm, 0)
        closed: set[str] = set()
        while True:
            wave: dict[str, tuple[int, ...]] = {}
            for key, arm in zip(keys, arms, strict=True):
                if arm.id in wave or arm.id in closed or drawn[arm.id] >= len(seeds):
                    continue
                more = self._more(key, by_arm[arm.id], seeds, drawn[arm.id], curtail)
                if more:
                    wave[arm.id] = seeds[drawn[arm.id] : drawn[arm.id] + more]
                    continue
                closed.add(arm.id)
                if key and seeds[0] == 0:
                    self.early.add(key)
            if not wave:
                return by_arm
            for arm_id, records in self._records([a for a in arms if a.id in wave], wave).items():
                by_arm[arm_id].extend(records)
                drawn[arm_id] += len(wave[arm_id])

    def _more(
        self,
        key: tuple[str, ...],
        records: list[RunRecord],
        seeds: tuple[int, ...],
        drawn: int,
        curtail: Curtail,
    ) -> int:
        """Seeds the probe draws next: all the rest once a run failed or was not compared."""
        if not drawn:
            return curtail(key, {}, seeds)
        ok = [r for r in records if r.ok]
        if len(ok) < drawn or self.reference.text is None:
            return len(seeds) - drawn
        sweep = self.bisect.sweep
        check = sweep.comparator_for(self.bisect.scenario)
        stats = score_or_count(ok, self.reference.text, check, sweep.similarity)
        if stats.scored < drawn:
            return len(seeds) - drawn
        flips = set(stats.flipped_seeds)
        return curtail(key, {s: s in flips for s in stats.seeds}, seeds)

    def _records(
        self, arms: Sequence[ArmSpec], seeds: Mapping[str, Sequence[int]]
    ) -> dict[str, list[RunRecord]]:
        view = self.bisect.scenario.view()
        planned: list[Planned] = [
            (RunContext(view, a.view(), s), a) for a in arms for s in seeds[a.id]
        ]
        known, todo = self.source.split(planned)
        by_arm: dict[str, list[RunRecord]] = {a.id: [] for a in arms}
        for record in [*known, *self.source.execute(todo)]:
            by_arm[record.arm].append(record)
        self.session.raise_if_stopped(pending=len(todo))
        return by_arm

    def _score(self, key: tuple[str, ...], records: list[RunRecord]) -> ProbeStats:
        ok = sorted((r for r in records if r.ok), key=lambda r: r.seed)
        if not key and self.reference.text is None:
            self.reference = resolve_reference(None, ok)
        sweep = self.bisect.sweep
        check = sweep.comparator_for(self.bisect.scenario)
        timed_out: list[tuple[str, int]] = []

        def late(run: RunRecord, code: DoubtCode, reason: str) -> None:
            timed_out.append((run.arm, run.seed))
            self.uncompared.setdefault(code, []).append((run.arm, run.seed))
            self.uncompared_reasons.setdefault(code, reason)

        probe = score_or_count(ok, self.reference.text, check, sweep.similarity, late)
        self.log.info(
            "bisect.probe",
            ablated=list(key),
            flips=probe.flips,
            samples=probe.scored,
            executed=self.source.runner_calls,
            uncompared=[seed for _, seed in timed_out],
        )
        return probe
