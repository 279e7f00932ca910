"""From one scenario's run records to its summary and verdict records (rules 2–7, 9, 11, 12)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from counterfact.defaults import COST_KEY
from counterfact.probes.arms import ArmSpec, Intervention, facets_diff, intervention
from counterfact.probes.comparators import Comparator
from counterfact.probes.manifest import Application
from counterfact.probes.null_band import NullBand, build_null_band
from counterfact.probes.pairs import pairs_of
from counterfact.probes.records import RunRecord
from counterfact.probes.scenarios import ScenarioSpec
from counterfact.probes.similarity import Similarity
from counterfact.probes.stats import ProbeStats, SimilarityStats
from counterfact.probes.tally import ArmTally, ScenarioTally, tally_runs
from counterfact.records.seedsets import SEED_LIST_MAX, pack
from counterfact.records.vocabulary import Reason
from counterfact.verdicts.cost import CostItem, CostReading, cost_class, cost_readings
from counterfact.verdicts.family import StatisticsSettings
from counterfact.verdicts.intervals import flip_rate_interval
from counterfact.verdicts.records import (
    ApplicationRecord,
    ChangedToRecord,
    CostReadingRecord,
    CostRecord,
    EffectRecord,
    IntervalRecord,
    NullBandRecord,
    ReferenceRecord,
    ScenarioSummary,
    SimilarityRecord,
    SimilarityTestRecord,
    TestRecord,
    VerdictRecord,
)
from counterfact.verdicts.significance import paired_effect, paired_test, similarity_test
from counterfact.verdicts.tiers import (
    ArmEvidence,
    Decision,
    ScenarioContext,
    baseline_claim,
    decide_arm,
)


@dataclass(frozen=True)
class ScenarioAssessment:
    """Everything judged on one scenario."""

    summary: ScenarioSummary
    verdicts: tuple[VerdictRecord, ...]
    """Baseline first, then challengers in declaration order."""


def similarity_record(stats: SimilarityStats | None) -> SimilarityRecord | None:
    """The record form of similarity stats."""
    if stats is None:
        return None
    return SimilarityRecord(mean=stats.mean, min=stats.min, max=stats.max, stdev=stats.stdev)


def _app_record(app: Application) -> ApplicationRecord:
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


@dataclass(frozen=True)
class _Judged:
    tally: ArmTally
    stats: ProbeStats | None
    intervention: Intervention
    application: Application
    outside: bool | None
    decision: Decision | None


def assess_scenario(
    scenario: str,
    reference: str | None,
    arms: Sequence[ArmSpec],
    baseline: str,
    runs: Sequence[RunRecord],
    samples: int,
    comparator: Comparator,
    similarity: Similarity,
    cost_key: str = COST_KEY,
) -> ScenarioAssessment:
    """Judge every arm of one scenario from its run records (any order, failed runs included).

    The same as :func:`assess_tally` on a tally of ``runs``; drivers that stream records feed a
    :class:`~counterfact.probes.tally.ScenarioTally` instead of holding them.
    """
    spec = ScenarioSpec(scenario, {}, reference)
    tally = tally_runs(spec, arms, baseline, runs, samples, comparator, similarity)
    return assess_tally(tally, cost_key)


def assess_tally(
    tally: ScenarioTally,
    cost_key: str = COST_KEY,
    statistics: StatisticsSettings | None = None,
) -> ScenarioAssessment:
    """Judge every arm of one scenario from its finished tally (rules 2-7, 9, 11-14, 16).

    Each challenger's test is raw here; :func:`~counterfact.verdicts.family.judge_family`
    adjusts it over its family and completes the statistical verdict and the claim.
    """
    settings = statistics or StatisticsSettings()
    baseline = tally.baseline
    base_tally = tally.arms[baseline]
    contexts: dict[int, ScenarioContext] = {}

    def context(samples: int) -> ScenarioContext:
        if samples not in contexts:
            contexts[samples] = _context(tally, samples)
        return contexts[samples]

    ctx = context(base_tally.samples)
    ordered = sorted(tally.arms.values(), key=lambda a: a.arm.id != baseline)
    judged = [
        _judge(arm, tally.stats(arm.arm.id), base_tally.arm, context(arm.samples))
        for arm in ordered
    ]
    readings = _cost_readings(judged, tally.stats(baseline), cost_key)  # the whole baseline
    records = [
        _record(j, context(j.tally.samples), j.tally.samples, readings).model_copy(
            update=_tested(tally, j, base_tally, settings) | _explained(j, base_tally)
        )
        for j in judged
    ]
    base_stats = tally.stats(baseline)
    stable = base_stats.stable if base_stats is not None else None
    summary = ScenarioSummary(
        id=tally.scenario.id,
        reference=ReferenceRecord.model_validate(
            {"from": tally.reference.source, "text": tally.reference.text}
        ),
        baseline=baseline,
        baseline_stable=stable,
        null_band=_band_record(ctx.band),
        arms=[a.arm.id for a in ordered],
    )
    return ScenarioAssessment(summary=summary, verdicts=tuple(records))


def _context(tally: ScenarioTally, samples: int) -> ScenarioContext:
    """What every arm is judged against, on the baseline's seeds ``0..samples-1``: the arm's own
    seeds (a sequential challenger may have used fewer than its baseline).
    """
    base_tally = tally.arms[tally.baseline]
    base_stats = tally.stats(tally.baseline, samples)
    band: NullBand | None = None
    if base_stats is not None:
        gates = tally.comparator.kind == "similarity"
        band = build_null_band(_band_similarities(base_stats, tally), gates=gates)
    return ScenarioContext(
        scenario=tally.scenario.id,
        baseline=tally.baseline,
        baseline_stats=base_stats or base_tally.stats(scored=False, upto=samples),
        baseline_stable=bool(base_stats is not None and base_stats.stable),
        band=band,
        comparator=tally.comparator.describe(),
        samples=samples,
        baseline_application=base_tally.application(),
        reference_is_seed0=tally.reference.source == "baseline-arm",
        answer_level=tally.comparator.answer_level,
    )


def _band_similarities(base: ProbeStats, tally: ScenarioTally) -> list[float]:
    """The baseline's similarities the band rests on: without seed 0 when seed 0's output is the
    reference (it compares with itself, rule 13).
    """
    if tally.reference.source != "baseline-arm":
        return list(base.similarities)
    return [sim for seed, sim in zip(base.seeds, base.similarities, strict=True) if seed != 0]


def _cost_readings(
    judged: Sequence[_Judged], base_stats: ProbeStats | None, cost_key: str
) -> dict[str, CostReading | None]:
    """Rule 11 over the ablation arms: each one's reading against the others' placebo band."""
    items = [
        CostItem(
            j.tally.arm.id,
            j.decision is not None and j.decision.verdict == "confirmed",
            j.stats.cost if j.stats else None,
        )
        for j in judged
        if j.intervention.kind == "ablation"
    ]
    return cost_readings(items, base_stats.cost if base_stats else None, cost_key)


def _band_record(band: NullBand | None) -> NullBandRecord | None:
    if band is None:
        return None
    return NullBandRecord(
        floor=band.floor,
        degenerate=band.degenerate,
        gates=band.gates,
        similarity=SimilarityRecord(**vars(band.similarity)),
    )


def _judge(
    tally: ArmTally, stats: ProbeStats | None, base_arm: ArmSpec, ctx: ScenarioContext
) -> _Judged:
    arm = tally.arm
    kind = intervention(arm, base_arm)
    application = tally.application()
    is_baseline = arm.id == base_arm.id
    outside: bool | None = None
    if not is_baseline and ctx.band is not None and stats is not None and stats.similarity:
        outside = ctx.band.outside(stats.similarity.mean)
    decision = None
    if not is_baseline:
        probe = stats or tally.stats(scored=False)
        decision = decide_arm(ArmEvidence(arm.id, probe, application, outside, kind), ctx)
    return _Judged(tally, stats, kind, application, outside, decision)


_NO_TEST = ("arm-not-applied", "baseline-not-applied")
"""Tiers under which the runs are not evidence about the arm: no test is reported (rule 12)."""


def _tested(
    tally: ScenarioTally, j: _Judged, base: ArmTally, settings: StatisticsSettings
) -> dict[str, Any]:
    """The raw test, effect and similarity test of a challenger (nothing for the baseline, or
    with no reference to score against; withheld, with the reason, when the arm or the baseline
    did not take effect).
    """
    arm = j.tally
    if arm is base or tally.reference.text is None or j.decision is None:
        return {}
    if j.decision.reason in _NO_TEST:
        return {"statistical_verdict_withheld": j.decision.reason}
    pairs = pairs_of(arm, base, exclude_seed0=tally.reference.source == "baseline-arm")
    test = paired_test(pairs, settings.pairing)
    effect = paired_effect(pairs)
    sim = similarity_test(pairs)
    return {
        "test": TestRecord(
            method=test.method,
            pairing=test.pairing,
            n10=test.n10,
            n01=test.n01,
            pairs=test.pairs,
            pairs_excluded=test.pairs_excluded,
            p_value=test.p_value,
            alpha=settings.alpha,
            min_attainable_p=test.min_attainable_p,
        ),
        "effect": None if effect is None else EffectRecord(**vars(effect)),
        "similarity_test": None if sim is None else SimilarityTestRecord(**vars(sim)),
    }


def _explained(j: _Judged, base: ArmTally) -> dict[str, Any]:
    """What a challenger's answer changed to, and how its facets differ from the baseline's."""
    if j.tally is base:
        return {}
    changed, others = None, None
    if j.stats is not None and j.stats.samples:
        changed = [
            ChangedToRecord(output=text, count=count, seeds=seeds)
            for text, count, seeds in j.tally.changed_to()
        ]
        others = j.stats.flips - sum(c.count for c in changed)
    return {
        "changed_to": changed,
        "changed_to_others": others,
        "facets_diff": facets_diff(base.arm, j.tally.arm),
    }


def _seed_sets(seeds: list[int], stats: ProbeStats | None, samples: int) -> dict[str, Any]:
    """The record's seed sets: lists, or bitmaps above SEED_LIST_MAX declared seeds."""
    present = set(seeds)
    failed = [s for s in range(samples) if s not in present]
    flipped = list(stats.flipped_seeds) if stats is not None else None
    if samples <= SEED_LIST_MAX:
        sims = list(stats.similarities) if stats is not None else None
        return {
            "seeds": seeds,
            "failed_seeds": failed,
            "flipped_seeds": flipped,
            "similarities": sims,
        }
    return {
        "seeds": None,
        "seeds_bits": pack(seeds, samples),
        "failed_seeds": None,
        "failed_seeds_bits": pack(failed, samples),
        "flipped_seeds": None,
        "flipped_seeds_bits": pack(flipped, samples) if flipped is not None else None,
        "similarities": None,
        "similarities_omitted": stats is not None,
    }


def _withheld(j: _Judged) -> Reason | None:
    """Rule 11: no cost class under failed runs or an unstable baseline (nor when the baseline
    did not take effect); the reason is recorded instead.
    """
    reason = j.decision.reason if j.decision is not None else None
    return reason if reason in _NO_CLASS else None


_NO_CLASS = ("runs-failed", "unstable-baseline", "baseline-not-applied")


def _reading_record(
    reading: CostReading | None, stats: ProbeStats | None
) -> CostReadingRecord | None:
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


def _record(
    j: _Judged,
    ctx: ScenarioContext,
    samples: int,
    readings: dict[str, CostReading | None],
) -> VerdictRecord:
    stats = j.stats
    seeds = j.tally.seeds
    interval = None
    if stats is not None:  # rule 13: the baseline's seed 0 is the reference, not evidence
        self_compared = j.decision is None and ctx.reference_is_seed0 and 0 in stats.seeds
        interval = flip_rate_interval(stats.flips, stats.samples - self_compared)
    cost = None
    if stats is not None and stats.cost is not None:
        cost = {
            k: CostRecord(median=c.median, min=c.min, max=c.max, reported=c.reported)
            for k, c in stats.cost.items()
        }
    confirmed = j.decision is not None and j.decision.verdict == "confirmed"
    is_ablation = j.tally.arm.id in readings
    withheld = _withheld(j) if is_ablation else None
    return VerdictRecord(
        scenario=ctx.scenario,
        arm=j.tally.arm.id,
        is_baseline=j.decision is None,
        intervention=j.intervention.kind,
        verdict=j.decision.verdict if j.decision else None,
        reason=j.decision.reason if j.decision else None,
        claim=j.decision.claim if j.decision else baseline_claim(ctx),
        samples=len(seeds),
        samples_declared=samples,
        **_seed_sets(seeds, stats, samples),
        flips=stats.flips if stats is not None else None,
        similarity=similarity_record(stats.similarity) if stats is not None else None,
        outside_null_band=j.outside,
        application=_app_record(j.application),
        cost=cost,
        runs_retried=j.tally.retried,
        runs_from_cache=j.tally.from_cache,
        cost_reading=_reading_record(readings.get(j.tally.arm.id), stats),
        cost_class=None
        if not is_ablation or withheld or not seeds  # no successful run: nothing to classify
        else cost_class(confirmed, readings.get(j.tally.arm.id)),
        cost_class_withheld=withheld,
        flip_rate_ci=None
        if interval is None
        else IntervalRecord(
            low=interval.low, high=interval.high, level=interval.level, method=interval.method
        ),
    )
