"""The bisect driver: culprit search probes -> executor -> run store -> ``bisect.json``."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from counterfact.exceptions import SweepInterrupted
from counterfact.orchestrator.executors import Executor, make_executor
from counterfact.orchestrator.identity import fingerprint
from counterfact.orchestrator.interrupt import graceful_stop
from counterfact.orchestrator.resolve import ResolvedSweep, ScenarioSpec
from counterfact.orchestrator.runs import RunSource, open_cache
from counterfact.orchestrator.store import RunStore, write_atomic
from counterfact.orchestrator.version import package_version
from counterfact.orchestrator.worker import now_iso
from counterfact.probes.arms import ArmSpec
from counterfact.probes.records import RunRecord
from counterfact.probes.runner import RunContext, ScenarioView
from counterfact.probes.stats import ProbeStats
from counterfact.verdicts.assess import score_runs, similarity_record, unscored_stats
from counterfact.verdicts.bisection import BisectOutcome, BisectProbe, bisect, bisect_claim
from counterfact.verdicts.records import BisectProbeRecord, BisectRecord, ReferenceRecord

BISECT_FILE = "bisect.json"


@dataclass(frozen=True)
class BisectResult:
    """The culprit search's record, and the runs it made."""

    record: BisectRecord
    runs: tuple[RunRecord, ...] = field(repr=False)
    run_dir: Path | None = None

    def report(self) -> str:
        """The verdict, each culprit set with its evidence, and the spend."""
        rec = self.record
        lines = [f"bisect {rec.name!r} on scenario {rec.scenario!r}: {rec.verdict} ({rec.reason})"]
        by_set = {tuple(sorted(p.ablated)): p for p in rec.probes if not p.cached}
        for i, culprit in enumerate(rec.culprits, 1):
            probe = by_set.get(tuple(sorted(culprit)))
            if probe is not None and probe.similarity is not None:
                evidence = (
                    f"ablating exactly this set flipped {probe.flips}/{probe.samples} seeds "
                    f"(mean similarity {probe.similarity.mean:.3f})"
                )
            else:
                evidence = "found jointly by the interference search (no probe ablated only it)"
            lines.append(f"  culprit set {i}: {{{', '.join(culprit)}}} — {evidence}")
        lines.append(
            f"  probes: {rec.probes_executed} run of {rec.max_probes} budget "
            f"({sum(p.cached for p in rec.probes)} cache hits, {rec.speculative_unused} "
            f"speculative unused); runs used: {rec.runs_used}; wall time {rec.wall_time_s:.1f} s"
        )
        lines.append(f"  {rec.claim}")
        return "\n".join(lines)


def probe_arm(base: ArmSpec, ids: Sequence[str]) -> ArmSpec:
    """The arm of one probe: the baseline plus the ablated ids; its id is ``ablate:`` and the
    sorted ids as a JSON list, which no two different sets share."""
    if not ids:
        return base
    return ArmSpec(
        id="ablate:" + json.dumps(sorted(ids), separators=(",", ":")),
        facets=dict(base.facets),
        ablations=(*base.ablations, *sorted(ids)),
        restorations=base.restorations,
    )


def _scenario(sweep: ResolvedSweep) -> ScenarioSpec:
    assert sweep.config.bisect is not None  # resolve_sweep(for_bisect=True) guarantees it
    wanted = sweep.config.bisect.scenario
    return next(s for s in sweep.scenarios if wanted in (None, s.id))


def run_bisect(
    sweep: ResolvedSweep,
    *,
    run_dir: Path | None,
    executor: Executor | None = None,
    fresh: bool = False,
    cache_dir: Path | None = None,
) -> BisectResult:
    """Search minimal culprit sets among ``bisect.suspects`` (DESIGN rule 10).

    Each probe's seeds run in parallel on the executor; probes run in the order the search
    needs them. Every run is appended to ``runs.jsonl`` as it finishes; ``bisect.json`` is
    written at the end.
    """
    cfg = sweep.config.bisect
    assert cfg is not None  # resolve_sweep(for_bisect=True) guarantees it
    scenario = _scenario(sweep)
    samples = sweep.config.samples
    base = sweep.baseline_arm()
    log = structlog.get_logger().bind(sweep=sweep.config.name, scenario=scenario.id)
    store = RunStore(run_dir, fresh=fresh)
    store.open(fingerprint(sweep, [base]))
    done: list[tuple[tuple[str, ...], ProbeStats]] = []
    started = now_iso()
    view = ScenarioView(id=scenario.id, inputs=scenario.inputs)
    reference: dict[str, str | None] = {"text": scenario.reference, "from": None}
    if scenario.reference is not None:
        reference["from"] = "prior-run"
    owned = executor is None
    ex = executor or make_executor(sweep.config.executor)
    source = RunSource(sweep, store, ex, open_cache(sweep, cache_dir), log)

    def run_probes(keys: Sequence[tuple[str, ...]]) -> list[ProbeStats]:
        arms = [probe_arm(base, key) for key in keys]
        planned = [(RunContext(view, a.view(), seed), a) for a in arms for seed in range(samples)]
        known, todo = source.split(planned)
        by_arm: dict[str, list[RunRecord]] = {a.id: [] for a in arms}
        for record in [*known, *source.execute(todo)]:
            by_arm[record.arm].append(record)
        if ex.stop_requested:
            raise SweepInterrupted(
                "interrupted during bisection; run the same command again to resume",
                recorded=len(store.records),
                planned=len(store.records) + len(todo),
            )
        stats: list[ProbeStats] = []
        for key, arm in zip(keys, arms, strict=True):
            ok = sorted((r for r in by_arm[arm.id] if r.ok), key=lambda r: r.seed)
            if not key and reference["text"] is None and ok and ok[0].seed == 0:
                reference["text"], reference["from"] = ok[0].output, "baseline-arm"
            text = reference["text"]
            if text is None:
                probe = unscored_stats(ok)
            else:
                probe = score_runs(ok, text, sweep.comparator, sweep.similarity)
            log.info(
                "bisect.probe",
                ablated=list(key),
                flips=probe.flips,
                samples=probe.samples,
                executed=source.runner_calls,
            )
            stats.append(probe)
            done.append((key, probe))
        return stats

    interrupted: SweepInterrupted | None = None
    t0 = time.perf_counter()
    try:
        ex.start()
        t0 = time.perf_counter()
        with graceful_stop(ex):
            outcome = bisect(
                cfg.suspects,
                run_probes,
                samples=samples,
                max_probes=cfg.max_probes,
                max_culprits=cfg.max_culprits,
                speculative=cfg.speculative,
            )
    except SweepInterrupted as exc:
        interrupted = exc
        outcome = BisectOutcome(
            verdict="inconclusive",
            reason="interrupted",
            culprits=(),
            probes=tuple(
                BisectProbe(key, stats, stats.flips > 0 if not key else stats.flipped, False, False)
                for key, stats in done
            ),
            probes_executed=len(done),
            speculative_unused=0,
        )
    finally:
        store.close()
        if owned:
            ex.close()
    record = BisectRecord(
        name=sweep.config.name,
        scenario=scenario.id,
        verdict=outcome.verdict,
        reason=outcome.reason,
        claim=bisect_claim(
            outcome,
            scenario=scenario.id,
            comparator=sweep.comparator.describe(),
            samples=samples,
            max_probes=cfg.max_probes,
        ),
        culprits=[list(c) for c in outcome.culprits],
        suspects=list(cfg.suspects),
        probes=[
            BisectProbeRecord(
                ablated=list(p.ablated),
                samples=p.stats.samples,
                flips=p.stats.flips,
                flipped=p.flipped,
                similarity=similarity_record(p.stats.similarity),
                cached=p.cached,
                speculative=p.speculative,
            )
            for p in outcome.probes
        ],
        runs_used=source.runner_calls,
        runs_reused=store.reused,
        probes_executed=outcome.probes_executed,
        speculative=cfg.speculative,
        speculative_unused=outcome.speculative_unused,
        max_probes=cfg.max_probes,
        max_culprits=cfg.max_culprits,
        samples=samples,
        comparator=sweep.comparator.describe(),
        reference=ReferenceRecord.model_validate(reference),
        wall_time_s=time.perf_counter() - t0,
        config=sweep.resolved_config(),
        config_source=str(sweep.source) if sweep.source else None,
        overrides=list(sweep.overrides),
        counterfact_version=package_version(),
        started_at=started,
        finished_at=now_iso(),
    )
    if run_dir is not None:
        data = record.model_dump(mode="json", by_alias=True)
        write_atomic(run_dir / BISECT_FILE, json.dumps(data, indent=2, default=str) + "\n")
    if interrupted is not None:
        raise interrupted
    log.info("bisect.done", verdict=record.verdict, culprits=record.culprits)
    return BisectResult(record=record, runs=tuple(store.records), run_dir=run_dir)
