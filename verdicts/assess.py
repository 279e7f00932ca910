"""From one scenario's run records to its summary and verdict records (rules 2–7, 9, 11, 12)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from counterfact.defaults import COST_KEY
from counterfact.probes.arms import ArmSpec, Intervention, facets_diff, intervention
from counterfact.probes.comparators import Comparator
from counterfact.probes.manifest import Application
from counterfact.probes.null_band import NullBand, build_null_band
from counterfact.probes.pairs import pairs_of
from counterfact.probes.scenarios import ScenarioSpec
from counterfact.probes.similarity import Similarity
from counterfact.probes.stats import ProbeStats
from counterfact.probes.tally import ArmTally, ScenarioTally, same_outputs, tally_runs
from counterfact.records.parts import (
    ChangedToRecord,
    CostRecord,
    EffectRecord,
    SequentialRecord,
    SimilarityRecord,
    SimilarityTestRecord,
)
from counterfact.records.runs import RunRecord
from counterfact.records.summary import (
    NullBandRecord,
    ReferenceRecord,
    ScenarioSummary,
    StatisticsRecord,
)
from counterfact.records.verdicts import TierRecord, VerdictRecord
from counterfact.records.vocabulary import Reason
from counterfact.verdicts.applied import BASELINE_NOT_APPLIED, NOT_APPLIED, check_failed, reason_of
from counterfact.verdicts.cost import CostItem, CostReading, cost_class, cost_readings
from counterfact.verdicts.judgement import Explained, Judgement
from counterfact.verdicts.placebo import determinism_doubt, determinism_sentence
from counterfact.verdicts.row_parts import app_record, reading_record, seed_sets, similarity_record
from counterfact.verdicts.rows import verdict_record
from counterfact.verdicts.standing import Doubt, context_doubts, manifest_doubts, run_doubts
from counterfact.verdicts.stats.intervals import flip_rate_interval
from counterfact.verdicts.stats.sequential import Look
from counterfact.verdicts.stats.settings import DEFAULT_STATISTICS
from counterfact.verdicts.stats.significance import (
    TestResult,
    paired_effect,
    paired_test,
    similarity_test,
)
from counterfact.verdicts.stopped import FIXED_SAMPLE, e_test, sequential_record
from counterfact.verdicts.tiers import (
    ArmEvidence,
    Decision,
    RunGaps,
    ScenarioContext,
    UnrunCause,
    baseline_claim,
    decide_arm,
)

R = TypeVar("R", EffectRecord, SimilarityTestRecord)


@dataclass(frozen=True)
class ScenarioAssessment:
    """Everything judged on one scenario."""

    summary: ScenarioSummary
    judgements: tuple[Judgement, ...]
    """Baseline first, then challengers in declaration order."""
    settings: StatisticsRecord = DEFAULT_STATISTICS

    @property
    def verdicts(self) -> tuple[VerdictRecord, ...]:
        """The rows with their raw tests (before any family adjustment), for one scenario on its
        own; a sweep builds its rows with :func:`~counterfact.verdicts.rows.verdict_rows`.
        """
        return tuple(verdict_record(j, None, self.settings) for j in self.judgements)


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
    statistics: StatisticsRecord | None = None,
    looks: Mapping[tuple[str, str], Look] | None = None,
    max_samples: int | None = None,
    unrun_cause: UnrunCause = "stopped",
) -> ScenarioAssessment:
    """Judge every arm of one scenario from its finished tally (rules 2-7, 9, 11-14, 16, 19).

    Each challenger's test is decided here — the fixed-sample test, or (``looks`` of a
    sequential sweep, capped at ``max_samples``) the e-process it stopped on — and left raw:
    :func:`~counterfact.verdicts.family.adjust_family` places it in its family. Seeds without
    a record were never run (``runs-missing``, not failed); ``unrun_cause`` says why in the
    claims (``budget``: the budget stopped scheduling).
    """
    settings = statistics or DEFAULT_STATISTICS
    baseline = tally.baseline
    base_tally = tally.arms[baseline]
    contexts: dict[int, ScenarioContext] = {}

    def context(samples: int) -> ScenarioContext:
        if samples not in contexts:
            contexts[samples] = _context(tally, samples, unrun_cause)
        return contexts[samples]

    ctx = context(base_tally.admitted)
    ordered = sorted(tally.arms.values(), key=lambda a: a.arm.id != baseline)
    judged = [
        _judge(arm, tally.stats(arm.arm.id), base_tally, context(arm.admitted)) for arm in ordered
    ]
    readings = _cost_readings(judged, tally.stats(baseline), cost_key)  # the whole baseline
    stops = _Stops(looks or {}, max_samples)
    judgements = [
        _judgement(tally, j, context(j.tally.admitted), readings, settings, stops) for j in judged
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
    return ScenarioAssessment(summary=summary, judgements=tuple(judgements), settings=settings)


@dataclass(frozen=True)
class _Stops:
    """A sequential sweep's looks (empty for a fixed-sample sweep)."""

    looks: Mapping[tuple[str, str], Look]
    max_samples: int | None

    def record(self, scenario: str, arm: str) -> tuple[Look, SequentialRecord] | None:
        """The look the arm stopped on, and its record; None when it did not stop (or the
        sweep is not sequential).
        """
        look = self.looks.get((scenario, arm))
        if look is None or look.stopped_for is None or self.max_samples is None:
            return None
        return look, sequential_record(look, self.max_samples)


@dataclass(frozen=True)
class _Tested:
    """A challenger's test, effect and similarity test, why there is none, and where it
    stopped (all None for the baseline).
    """

    test: TestResult | None = None
    effect: EffectRecord | None = None
    similarity_test: SimilarityTestRecord | None = None
    withheld: Reason | None = None
    sequential: SequentialRecord | None = None


def _context(tally: ScenarioTally, samples: int, unrun_cause: UnrunCause) -> ScenarioContext:
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
        baseline_unrun=int((~base_tally.seen[:samples]).sum()),
        unrun_cause=unrun_cause,
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
        similarity=SimilarityRecord.model_validate(band.similarity),
    )


def _gaps(arm: ArmTally, base: ArmTally, samples: int) -> RunGaps:
    """The seeds ``0..samples-1`` that are not samples: runs that failed, seeds never run."""
    seen_a, seen_b = arm.seen[:samples], base.seen[:samples]
    timed_out = arm.comparison_failed[:samples] | base.comparison_failed[:samples]
    return RunGaps(
        arm_failed=int((seen_a & ~arm.ok[:samples]).sum()),
        baseline_failed=int((seen_b & ~base.ok[:samples]).sum()),
        unrun=int((~seen_a | ~seen_b).sum()),
        uncompared=int(timed_out.sum()),
    )


def _judge(
    tally: ArmTally,
    stats: ProbeStats | None,
    base_tally: ArmTally,
    ctx: ScenarioContext,
) -> _Judged:
    arm, base_arm = tally.arm, base_tally.arm
    kind = intervention(arm, base_arm)
    application = tally.application()
    is_baseline = arm.id == base_arm.id
    outside: bool | None = None
    if not is_baseline and ctx.band is not None and stats is not None and stats.similarity:
        outside = ctx.band.outside(stats.similarity.mean)
    decision = None
    if not is_baseline:
        probe = stats or tally.stats(scored=False)
        gaps = _gaps(tally, base_tally, ctx.samples)
        evidence = ArmEvidence(arm.id, probe, application, outside, kind, gaps)
        decision = decide_arm(evidence, ctx)
    return _Judged(tally, stats, kind, application, outside, decision)


_NO_TEST = NOT_APPLIED
"""Tiers under which the runs are not evidence about the arm: no test is reported (rule 12)."""


def _judgement(
    tally: ScenarioTally,
    j: _Judged,
    ctx: ScenarioContext,
    readings: dict[str, CostReading | None],
    settings: StatisticsRecord,
    stops: _Stops,
) -> Judgement:
    """One row's judgement: its tier fields, claim, test and doubts."""
    base = tally.arms[tally.baseline]
    tested = _tested(tally, j, base, settings, stops)
    doubts, unassessed = _doubted(tally, j, base)
    return Judgement(
        scenario=tally.scenario.id,
        arm=j.tally.arm.id,
        tier=_tier(j, ctx, readings, _explained(j, base), tally.check_label, base),
        claim=_claim(j, base, ctx),
        test=tested.test,
        effect=tested.effect,
        similarity_test=tested.similarity_test,
        withheld=tested.withheld,
        sequential=tested.sequential,
        doubts=doubts,
        unassessed=unassessed,
    )


def _doubted(
    tally: ScenarioTally, j: _Judged, base: ArmTally
) -> tuple[tuple[Doubt, ...], str | None]:
    """The row's doubts from its runs, manifests, reference and comparator (rule 25), or why it
    is not assessed.
    """
    if j.decision is None:
        return (), "this is the baseline every arm is compared with"
    if not j.tally.ok[: j.tally.admitted].any():
        return (), "the arm has no successful run"
    seed0 = tally.reference.source == "baseline-arm"
    determinism = determinism_doubt(j.tally, base)
    doubts = (
        ([determinism] if determinism is not None else [])
        + run_doubts(j.tally, base)
        + manifest_doubts(j.tally, base)
        + context_doubts(seed0, tally.comparator.answer_level)
    )
    return tuple(doubts), None


def _claim(j: _Judged, base: ArmTally, ctx: ScenarioContext) -> str:
    """The tier's claim; a same-seeds placebo's failed determinism check said after it."""
    if j.decision is None:
        return baseline_claim(ctx)
    determinism = determinism_doubt(j.tally, base)
    if determinism is None:
        return j.decision.claim
    return f"{j.decision.claim} {determinism_sentence(determinism)}"


def _not_applied(j: _Judged, base: ArmTally) -> Reason | None:
    """Why the runs are not evidence about the arm (rule 12): the tier's gate, or — whatever
    the tier decided first (an unstable baseline comes before the manifest check) — a manifest
    check that failed for the baseline or the arm. No test is reported for such an arm.
    """
    if j.decision is not None and j.decision.reason in _NO_TEST:
        return j.decision.reason
    if check_failed(base_app := base.application()):
        return reason_of(base_app, "baseline")
    if check_failed(j.application):
        return reason_of(j.application, "arm")
    return None


def _tested(
    tally: ScenarioTally,
    j: _Judged,
    base: ArmTally,
    settings: StatisticsRecord,
    stops: _Stops,
) -> _Tested:
    """A challenger's test (the e-process a sequential arm stopped on), effect, similarity test
    and stopping record: nothing for the baseline, nor a test with no reference to score
    against; withheld, with the reason, when the arm or the baseline did not take effect.
    """
    arm = j.tally
    if arm is base or j.decision is None:
        return _Tested()
    stop = stops.record(tally.scenario.id, arm.arm.id)
    sequential = stop[1] if stop is not None else None
    if tally.reference.text is None:
        return _Tested(sequential=sequential)
    gate = _not_applied(j, base)
    if gate is not None:
        return _Tested(sequential=sequential, withheld=gate)
    pairs = pairs_of(arm, base, exclude_seed0=tally.reference.source == "baseline-arm")
    test = paired_test(pairs, settings.pairing, settings.alternative)
    effect = paired_effect(pairs)
    # Information about the comparator's own instrument: only a similarity comparator decides by
    # similarity, so only then is the similarity test reported (rule 16).
    by_similarity = tally.comparator.kind == "similarity"
    sim = similarity_test(pairs, settings.alternative) if by_similarity else None
    if stop is not None:  # rule 19: the e-process decides; the rest assume fixed seeds
        test = e_test(test, stop[0])
        effect = _fixed_sample(effect)
        sim = _fixed_sample(sim)
    return _Tested(test, effect, sim, sequential=sequential)


def _fixed_sample(part: R | None) -> R | None:
    """A figure that assumes the seeds were fixed, said so in its method (validated anew)."""
    if part is None:
        return None
    return type(part).model_validate(part.model_dump() | {"method": part.method + FIXED_SAMPLE})


def _explained(j: _Judged, base: ArmTally) -> Explained:
    """What a challenger's answer changed to, and how its facets differ from the baseline's."""
    if j.tally is base:
        return {}
    changed, others = None, None
    if j.stats is not None and j.stats.scored:
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


def _withheld(j: _Judged) -> Reason | None:
    """Rule 11: no cost class under failed or unrun runs or an unstable baseline (nor when the
    baseline did not take effect); the reason is recorded instead.
    """
    reason = j.decision.reason if j.decision is not None else None
    return reason if reason in _NO_CLASS else None


_NO_CLASS = ("runs-failed", "runs-missing", "unstable-baseline", *BASELINE_NOT_APPLIED)


def _tier(
    j: _Judged,
    ctx: ScenarioContext,
    readings: dict[str, CostReading | None],
    explained: Explained,
    check: str | None,
    base: ArmTally,
) -> TierRecord:
    """The row's tier-level fields (everything but the decision, the claim and the test)."""
    samples = j.tally.admitted
    stats = j.stats
    seeds = list(stats.seeds) if stats is not None else j.tally.seeds  # judged seeds only
    interval = None
    if stats is not None:  # rule 13: the baseline's seed 0 is the reference, not evidence
        self_compared = j.decision is None and ctx.reference_is_seed0 and 0 in stats.seeds
        interval = flip_rate_interval(stats.flips, stats.scored - self_compared)
    cost = None
    if stats is not None and stats.cost is not None:
        cost = {k: CostRecord.model_validate(c) for k, c in stats.cost.items()}
    confirmed = j.decision is not None and j.decision.verdict == "confirmed"
    is_ablation = j.tally.arm.id in readings
    withheld = _withheld(j) if is_ablation else None
    return TierRecord(
        scenario=ctx.scenario,
        arm=j.tally.arm.id,
        is_baseline=j.decision is None,
        intervention=j.intervention.kind,
        placebo=j.tally.arm.placebo_kind,
        tier_verdict=j.decision.verdict if j.decision else None,
        tier_reason=j.decision.reason if j.decision else None,
        samples=len(seeds),
        samples_declared=samples,
        **seed_sets(j.tally, seeds, stats, samples),
        flips=stats.flips if stats is not None else None,
        similarity=similarity_record(stats.similarity) if stats is not None else None,
        outside_null_band=j.outside,
        application=app_record(j.application),
        cost=cost,
        runs_retried=j.tally.retried,
        runs_from_cache=j.tally.from_cache,
        cost_reading=reading_record(readings.get(j.tally.arm.id), stats),
        cost_class=None
        if not is_ablation or withheld or not seeds  # no successful run: nothing to classify
        else cost_class(confirmed, readings.get(j.tally.arm.id)),
        cost_class_withheld=withheld,
        flip_rate_ci=interval,
        **explained,
        check=check,
        outputs_as_baseline=None
        if j.decision is None
        else same_outputs(j.tally, base, j.tally.admitted),
    )
