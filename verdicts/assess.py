"""From one scenario's run records to its summary and verdict records (rules 2–7, 12)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from counterfact.probes.arms import ArmSpec
from counterfact.probes.comparators import Comparator
from counterfact.probes.manifest import Application, check_application
from counterfact.probes.null_band import NullBand, build_null_band
from counterfact.probes.records import RunRecord
from counterfact.probes.similarity import Similarity
from counterfact.probes.stats import ProbeStats, SimilarityStats, summarize_probe
from counterfact.verdicts.intervals import flip_rate_interval
from counterfact.verdicts.records import (
    ApplicationRecord,
    CostRecord,
    IntervalRecord,
    NullBandRecord,
    ReferenceRecord,
    ScenarioSummary,
    SimilarityRecord,
    VerdictRecord,
)
from counterfact.verdicts.tiers import (
    ArmEvidence,
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


def _sim_record(stats: SimilarityStats | None) -> SimilarityRecord | None:
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
    )


def _score(
    runs: Sequence[RunRecord], reference: str, comparator: Comparator, similarity: Similarity
) -> ProbeStats:
    outputs = [r.output or "" for r in runs]
    sims = similarity.score(reference, outputs)
    flipped = [comparator.flipped(reference, o, s) for o, s in zip(outputs, sims, strict=True)]
    return summarize_probe([r.seed for r in runs], flipped, sims, [r.cost for r in runs])


def assess_scenario(
    scenario: str,
    reference: str | None,
    arms: Sequence[ArmSpec],
    baseline: str,
    runs: Sequence[RunRecord],
    samples: int,
    comparator: Comparator,
    similarity: Similarity,
) -> ScenarioAssessment:
    """Judge every arm of one scenario from its run records.

    Args:
        scenario: the scenario id.
        reference: the scenario's own reference, or None to use the baseline's seed-0 output.
        arms: all arms, in declaration order.
        baseline: the baseline arm id.
        runs: the scenario's run records (any order; failed runs included).
        samples: seeds declared per arm (``0..samples-1``).
        comparator: decides flips.
        similarity: scores outputs against the reference.
    """
    ok: dict[str, list[RunRecord]] = {a.id: [] for a in arms}
    for run in sorted(runs, key=lambda r: r.seed):
        if run.ok and run.arm in ok and 0 <= run.seed < samples:
            ok[run.arm].append(run)
    ref_from: str | None = "prior-run" if reference is not None else None
    if reference is None:
        seed0 = [r for r in ok[baseline] if r.seed == 0]
        if seed0:
            reference, ref_from = seed0[0].output, "baseline-arm"
    scored: dict[str, ProbeStats | None] = {
        arm_id: _score(arm_runs, reference, comparator, similarity)
        if reference is not None
        else None
        for arm_id, arm_runs in ok.items()
    }
    base_stats = scored[baseline]
    band: NullBand | None = None
    stable: bool | None = None
    if base_stats is not None:
        stable = base_stats.flips == 0
        band = build_null_band(base_stats.similarities, gates=comparator.kind == "similarity")
    ctx = ScenarioContext(
        scenario=scenario,
        baseline=baseline,
        baseline_stats=base_stats or _unscored(ok[baseline]),
        baseline_stable=bool(stable),
        band=band,
        comparator=comparator.describe(),
        samples=samples,
    )
    ordered = sorted(arms, key=lambda a: a.id != baseline)
    records = [
        _record(arm, ok[arm.id], scored[arm.id], ctx, samples, is_baseline=arm.id == baseline)
        for arm in ordered
    ]
    summary = ScenarioSummary(
        id=scenario,
        reference=ReferenceRecord.model_validate({"from": ref_from, "text": reference}),
        baseline=baseline,
        baseline_stable=stable,
        null_band=None
        if band is None
        else NullBandRecord(
            floor=band.floor,
            degenerate=band.degenerate,
            gates=band.gates,
            similarity=SimilarityRecord(**vars(band.similarity)),
        ),
        arms=[a.id for a in ordered],
    )
    return ScenarioAssessment(summary=summary, verdicts=tuple(records))


def _unscored(runs: Sequence[RunRecord]) -> ProbeStats:
    """Stats that only count successful seeds, for when there is no reference to score against.

    Only reached when the baseline's seed 0 failed, so the runs-failed tier decides first and the
    zero flips here are never read as evidence (the record shows flips as null).
    """
    n = len(runs)
    return summarize_probe([r.seed for r in runs], [False] * n, [1.0] * n, [None] * n)


def _record(
    arm: ArmSpec,
    runs: Sequence[RunRecord],
    stats: ProbeStats | None,
    ctx: ScenarioContext,
    samples: int,
    *,
    is_baseline: bool,
) -> VerdictRecord:
    seeds = [r.seed for r in runs]
    application = check_application(arm.facets, [r.manifest for r in runs])
    outside: bool | None = None
    if not is_baseline and ctx.band is not None and stats is not None and stats.similarity:
        outside = ctx.band.outside(stats.similarity.mean)
    if is_baseline:
        verdict, reason, claim = None, None, baseline_claim(ctx)
    else:
        probe = stats or _unscored(runs)
        decision = decide_arm(ArmEvidence(arm.id, probe, application, outside), ctx)
        verdict, reason, claim = decision.verdict, decision.reason, decision.claim
    interval = flip_rate_interval(stats.flips, stats.samples) if stats is not None else None
    cost: Mapping[str, CostRecord] | None = None
    if stats is not None and stats.cost is not None:
        cost = {k: CostRecord(median=c.median, min=c.min, max=c.max) for k, c in stats.cost.items()}
    return VerdictRecord(
        scenario=ctx.scenario,
        arm=arm.id,
        is_baseline=is_baseline,
        verdict=verdict,
        reason=reason,
        claim=claim,
        samples=len(seeds),
        samples_declared=samples,
        seeds=seeds,
        failed_seeds=[s for s in range(samples) if s not in set(seeds)],
        flips=stats.flips if stats is not None else None,
        flipped_seeds=list(stats.flipped_seeds) if stats is not None else None,
        similarities=list(stats.similarities) if stats is not None else None,
        similarity=_sim_record(stats.similarity) if stats is not None else None,
        outside_null_band=outside,
        application=_app_record(application),
        cost=dict(cost) if cost is not None else None,
        flip_rate_ci=None
        if interval is None
        else IntervalRecord(
            low=interval.low, high=interval.high, level=interval.level, method=interval.method
        ),
    )
