"""The bisect driver: culprit search probes -> executor -> run store -> ``bisect.json``."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from counterfact.exceptions import BudgetExhausted, RunsFailed, SweepInterrupted
from counterfact.orchestrator.config.bisectsettings import BisectSettings
from counterfact.orchestrator.config.resolve import ResolvedBisect
from counterfact.orchestrator.drivers.ending import Ending, watched
from counterfact.orchestrator.drivers.probing import ManifestCheckFailed, ProbeRunner
from counterfact.orchestrator.drivers.provenance import (
    fingerprint_of,
    provenance,
)
from counterfact.orchestrator.drivers.session import Session, sweep_judges
from counterfact.orchestrator.engine.calling.worker import now_iso
from counterfact.orchestrator.engine.executors.base import Executor
from counterfact.orchestrator.engine.watching.events import get_logger
from counterfact.orchestrator.storage.recordfiles import runs_of
from counterfact.probes.tally import RUN_FLAGS
from counterfact.records.bisect import (
    BisectProbeRecord,
    BisectRecord,
    ConfirmationRecord,
    CulpritCheckRecord,
)
from counterfact.records.execution import ExecutionRecord
from counterfact.records.paths import BISECT_FILE, RunPaths
from counterfact.records.runs import RunRecord
from counterfact.records.summary import ReferenceRecord
from counterfact.records.vocabulary import BisectReason, DoubtCode
from counterfact.verdicts.bisect.rank import by_rate, random_ablations, surrogate
from counterfact.verdicts.bisect.search import BisectOutcome, Decide, bisect, interrupted_outcome
from counterfact.verdicts.bisect.wording import bisect_claim
from counterfact.verdicts.row_parts import similarity_record
from counterfact.verdicts.standing import (
    bisect_doubts,
    standing_of,
    standing_sentence,
)


@dataclass(frozen=True)
class BisectResult:
    """What a culprit search produced; shaped like :class:`~.sweep.SweepResult`.

    - ``verdict``, ``reason``, ``culprits``, ``probes``, ``claim``: the search's outcome (the
      fields of ``bisect.json``, also whole as ``record``);
    - ``runs``: every :class:`~counterfact.records.RunRecord` the search used;
    - ``run_dir``: where the records went (None: in memory only);
    - ``table()``: the outcome as text (``report()`` is the old name); ``to_frame()``: the probes
      as a pandas DataFrame, one row per probe use.

    Example::

        result = find_culprits(["fact:a", "fact:b"], runner, reference="wrong", executor="local")
        result.verdict, result.culprits   # ('confirmed', [['fact:b']])
        print(result.table())
    """

    record: BisectRecord
    """``bisect.json``: the whole record."""
    runs: tuple[RunRecord, ...] = field(repr=False)
    """Every run record the search used (read back ones included)."""
    run_dir: Path | None = None
    """The run directory; None when nothing was written."""

    @property
    def verdict(self) -> str:
        """``confirmed``, ``not-reproducible`` or ``inconclusive``."""
        return self.record.verdict

    @property
    def reason(self) -> str:
        """Why the search ended as it did (``culprits-found``, ``budget-exhausted`` ...)."""
        return self.record.reason

    @property
    def culprits(self) -> list[list[str]]:
        """Minimal culprit sets in discovery order; empty unless confirmed."""
        return [list(c) for c in self.record.culprits]

    @property
    def probes(self) -> list[BisectProbeRecord]:
        """Probe uses in execution order, the baseline first."""
        return list(self.record.probes)

    @property
    def claim(self) -> str:
        """The search's claim, in words."""
        return self.record.claim

    def table(self) -> str:
        """The outcome as text: the verdict, each culprit set with its evidence, the spend."""
        return self.report()

    def to_frame(self) -> Any:
        """The probes as a pandas DataFrame (nested fields flattened into dotted columns).

        Raises:
            ImportError: pandas is not installed (``pip install 'counterfact[data]'``).
        """
        from counterfact.orchestrator.drivers.outputs.export import records_frame

        return records_frame(self.record.probes, "BisectResult", BisectProbeRecord)

    def report(self, wall_time_s: float | None = None) -> str:
        """The verdict, each culprit set with its evidence, and the spend.

        Args:
            wall_time_s: the whole command's wall time, shown beside the search's own (which
                on a resume that reads every run back is close to nothing).
        """
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
        ran = rec.execution
        reused = f", {ran.runs_reused} read back (resume)" if ran.runs_reused else ""
        took = (
            f"search {rec.wall_time_s:.1f} s"
            if wall_time_s is None
            else f"wall time {wall_time_s:.1f} s (the search {rec.wall_time_s:.1f} s)"
        )
        lines.append(
            f"  probes: {rec.probes_executed} run of {rec.max_probes} budget "
            f"({sum(p.cached for p in rec.probes)} cache hits, {rec.speculative_unused} "
            f"speculative unused); runs: {ran.runs_used} run now{reused}{_judged(rec)}; {took}"
        )
        lines.append(f"  {rec.claim}")
        return "\n".join(lines)


def _judged(rec: BisectRecord) -> str:
    """``; judge 12 calls (3 now)``: a model judge's calls in the directory and this session's."""
    spend = rec.execution.spend
    calls = (spend.judge or {}).get("calls") if spend else None
    if not calls:
        return ""
    return f"; judge {calls:,.0f} calls ({sum(j.calls for j in rec.judges or ()):,} now)"


Stopped = SweepInterrupted | RunsFailed[BisectResult] | BudgetExhausted[BisectResult]
"""What stops a search mid-way and is raised again once ``bisect.json`` is written (a budget's
stop with the search so far as its result)."""

_STOPPED_BY: dict[type[Exception], BisectReason] = {
    SweepInterrupted: "interrupted",
    RunsFailed: "runs-failed",
    BudgetExhausted: "spend-exhausted",
}


def run_bisect(
    bisect_plan: ResolvedBisect,
    *,
    run_dir: Path | None,
    executor: Executor | None = None,
    fresh: bool = False,
    cache_dir: Path | None = None,
) -> BisectResult:
    """Search minimal culprit sets among ``bisect.suspects`` (rule 10).

    Each probe's seeds run in parallel on the executor; probes run in the order the search
    needs them. Every run is appended to ``runs.jsonl`` as it finishes; ``bisect.json`` is
    written at the end, and also when Ctrl-C stops the search (then ``SweepInterrupted`` is
    raised after it is written).
    """
    _require_bisect_plan(bisect_plan)
    sweep, scenario, base = bisect_plan.sweep, bisect_plan.scenario, bisect_plan.base
    started = now_iso()
    session = Session(
        sweep,
        run_dir,
        fingerprint=fingerprint_of(sweep, [base]),
        watched=watched([scenario.id], [base.id], base.id),
        executor=executor,
        fresh=fresh,
        cache_dir=cache_dir,
        keep=True,
        log=get_logger(sweep=sweep.name, scenario=scenario.id),
    )
    with session:
        probes = ProbeRunner(bisect_plan, session)
        outcome, stopped, wall = session.execute(lambda: _search(bisect_plan, probes))
        ending = _ending(session, stopped)
        closed = session.close(ending)
        record = _judge(bisect_plan, outcome, probes, session, wall, closed, started)
        session.store.write_record(BISECT_FILE, record)
        if isinstance(stopped, BudgetExhausted):  # the CLI shows what the budget bought
            stopped.result = BisectResult(record, tuple(session.store.records), run_dir)
        if stopped is not None:
            raise stopped  # as the probe runner raised it, now that bisect.json is written
        session.conclude(ending)
    session.log.info("bisect.done", verdict=record.verdict, culprits=record.culprits)
    return BisectResult(record=record, runs=tuple(session.store.records), run_dir=run_dir)


def _ending(session: Session, stopped: Stopped | None) -> Ending:
    """How the search ended: a stop that came after the last probe is no interrupt, and a
    failure is worded as the probe runner raised it.
    """
    ending = session.ending()
    if stopped is None and ending.kind == "interrupted":
        return Ending("done")
    if isinstance(stopped, RunsFailed) and ending.kind in ("aborted", "all-failed"):
        return Ending(ending.kind, str(stopped))
    return ending


def ranked(settings: BisectSettings, probes: ProbeRunner, decide: Decide) -> list[str]:
    """The suspects in the order the search takes them (``bisect.rank``): as given, or after
    the ranking pass's probes (all submitted at once; the search reads them back). The pass
    runs only once the baseline probe holds, and only when it takes at most half of
    ``max_probes`` (its probes count against it: :attr:`ProbeRunner.ranking` says how many).
    """
    order = list(settings.suspects)
    if settings.rank == "given":
        return order
    (base,) = probes([()])  # first: its seed 0 may be the reference the pass is scored against
    holds = base.flips == 0 if decide.mode != "test" else base.flips * 2 < base.scored
    keys: list[tuple[str, ...]]
    if settings.rank == "loo":
        keys = [(s,) for s in order]
    else:
        masks = random_ablations(len(order), settings.rank_probes, np.random.default_rng(0))
        keys = [tuple(s for s, gone in zip(order, row, strict=True) if gone) for row in masks]
    if not holds or 2 * len(keys) > settings.max_probes:
        return order  # the search stops at its baseline, or the pass would eat its budget
    stats = probes(keys)
    probes.ranking = len(keys)
    rates = [st.flips / max(st.scored, 1) for st in stats]
    return by_rate(order, rates) if settings.rank == "loo" else surrogate(order, masks, rates)


def _require_bisect_plan(value: object) -> None:
    """Callers without a type checker may pass a ResolvedSweep (the pre-0.2 API): say what to do."""
    if not isinstance(value, ResolvedBisect):
        msg = (
            f"run_bisect takes a ResolvedBisect, got {type(value).__name__}; load the file "
            "with load_bisect(path) (not load_sweep), or call find_culprits(...)"
        )
        raise TypeError(msg)


def _search(
    plan: ResolvedBisect, probes: ProbeRunner
) -> tuple[BisectOutcome, Stopped | None, float]:
    """Run the search; a Ctrl-C, failed runs or the spend budget become the outcome of a stopped
    search (and the exception is returned to re-raise once ``bisect.json`` is written).
    """
    settings = plan.settings
    decide = Decide(
        mode=settings.decide,
        alpha=plan.sweep.statistics.alpha,
        exclude_seed0=plan.scenario.reference is None,
    )
    t0 = time.perf_counter()  # the executor starts on its first run (none on a finished resume)
    try:  # under the session's graceful stop
        probes.order = ranked(settings, probes, decide)
        outcome = bisect(
            probes.order,
            probes,
            samples=plan.sweep.samples,
            max_probes=settings.max_probes - probes.ranking,
            max_culprits=settings.max_culprits,
            speculative=settings.speculative,
            decide=decide,
            stop_early=settings.stop_early,
        )
    except (SweepInterrupted, RunsFailed, BudgetExhausted) as exc:
        found = interrupted_outcome(
            probes.done,
            decide,
            suspects=settings.suspects,
            samples=plan.sweep.samples,
            max_culprits=settings.max_culprits,
            reason=_STOPPED_BY[type(exc)],
            early=frozenset(probes.early),
        )
        return found, exc, time.perf_counter() - t0
    except ManifestCheckFailed as exc:
        return _not_applied(plan, probes, decide, exc), None, time.perf_counter() - t0
    return outcome, None, time.perf_counter() - t0


def _not_applied(
    plan: ResolvedBisect, probes: ProbeRunner, decide: Decide, exc: ManifestCheckFailed
) -> BisectOutcome:
    """A search its manifest check stopped (rule 6, as a sweep's baseline gate): inconclusive,
    the probes that ran listed, no culprit claimed (not even a set found before).
    """
    reason: BisectReason = (
        "baseline-facet-not-reported" if exc.application.unreported else "baseline-not-applied"
    )
    found = interrupted_outcome(
        probes.done,
        decide,
        suspects=plan.settings.suspects,
        samples=plan.sweep.samples,
        max_culprits=plan.settings.max_culprits,
        reason=reason,
        early=frozenset(probes.early),
    )
    return replace(found, verdict="inconclusive", culprits=(), checks=(), unconfirmed_found=())


def _run_flags(session: Session, probes: ProbeRunner) -> dict[DoubtCode, list[tuple[str, int]]]:
    """The search's runs that were retried, cached, resubmitted or escaped (from the records
    kept in memory, else from ``runs.jsonl``), and those whose output could not be compared
    (by how), as (probe, seed).
    """
    timed_out: dict[DoubtCode, list[tuple[str, int]]] = dict(probes.uncompared)
    store = session.store
    if store.keep:
        records: Iterable[RunRecord] = store.records
    elif store.run_dir is not None and RunPaths(store.run_dir).runs.exists():
        records = runs_of(store.run_dir)
    else:
        return timed_out
    found: dict[DoubtCode, list[tuple[str, int]]] = {code: [] for code, _, _ in RUN_FLAGS}
    for r in records:
        for code, _, flagged in RUN_FLAGS:
            if flagged(r):
                found[code].append((r.arm, r.seed))
    return found | timed_out


def _probe_records(outcome: BisectOutcome) -> list[BisectProbeRecord]:
    return [
        BisectProbeRecord(
            ablated=list(p.ablated),
            samples=p.stats.scored,
            flips=p.stats.flips,
            flipped=p.flipped,
            similarity=similarity_record(p.stats.similarity),
            cached=p.cached,
            speculative=p.speculative,
            p_value=p.p_value,
            n10=p.n10,
            n01=p.n01,
            decided_early=p.decided_early,
        )
        for p in outcome.probes
    ]


def _check_records(outcome: BisectOutcome) -> list[CulpritCheckRecord]:
    return [
        CulpritCheckRecord(
            culprit=list(c.culprit),
            one_minimal=c.one_minimal,
            probes=[list(k) for k in c.probes],
            shrunk_from=None if c.shrunk_from is None else list(c.shrunk_from),
            minimal_on_fresh=None if c.fresh is None else c.fresh.minimal,
            fresh_probes=[] if c.fresh is None else [list(k) for k in c.fresh.probes],
            fresh_p_values=[] if c.fresh is None else list(c.fresh.p_values),
        )
        for c in outcome.checks
    ]


def _judge(
    plan: ResolvedBisect,
    outcome: BisectOutcome,
    probes: ProbeRunner,
    session: Session,
    wall: float,
    closed: ExecutionRecord,
    started: str,
) -> BisectRecord:
    """``bisect.json``, built once (with how the search ended)."""
    sweep, settings, samples = plan.sweep, plan.settings, plan.sweep.samples
    check = sweep.comparator_for(plan.scenario)  # the question's own expect, if it has one
    comparator, answer_level = check.describe(), check.answer_level
    seed0 = probes.reference.source == "baseline-arm"
    manifests = probes.manifests()
    flags = _run_flags(session, probes)
    doubts = bisect_doubts(
        outcome, samples, seed0, answer_level, flags, manifests, probes.uncompared_reasons
    )
    assessed = outcome.verdict != "inconclusive"
    standing = standing_of(doubts, assessed)
    why = "the search ended inconclusive: there is no answer to be sure of"
    claim = bisect_claim(
        outcome,
        scenario=plan.scenario.id,
        comparator=comparator,
        samples=samples,
        max_probes=settings.max_probes,
        noun="answer" if answer_level else "output",
        baseline=plan.base.id,
        manifests=manifests.application,
    )
    return BisectRecord(
        scenario=plan.scenario.id,
        verdict=outcome.verdict,
        reason=outcome.reason,
        samples_needed=outcome.underpowered.samples_needed if outcome.underpowered else None,
        claim=f"{standing_sentence(standing, doubts, why)} {claim}",
        standing=standing,
        reasons=[d.record() for d in doubts],
        culprits=[list(c) for c in outcome.culprits],
        search_complete=outcome.search_complete,
        culprit_checks=_check_records(outcome),
        unconfirmed_found=[list(c) for c in outcome.unconfirmed_found],
        suspects=list(probes.order or settings.suspects),
        probes=_probe_records(outcome),
        decide=outcome.decide,
        decide_asked=settings.decide,
        noise_seen=[list(k) for k in outcome.noise],
        confirmations=[
            ConfirmationRecord(**vars(c) | {"culprit": list(c.culprit)})
            for c in outcome.confirmations
        ],
        execution=closed,
        ranking_probes=probes.ranking,
        probes_executed=outcome.probes_executed,
        speculative=settings.speculative,
        stop_early=settings.stop_early,
        speculative_unused=outcome.speculative_unused,
        max_probes=settings.max_probes,
        max_culprits=settings.max_culprits,
        samples=samples,
        comparator=comparator,
        reference=ReferenceRecord.model_validate(
            {"text": probes.reference.text, "from": probes.reference.source}
        ),
        wall_time_s=wall,
        judges=[j.record() for j in sweep_judges(sweep)] or None,
        **dict(provenance(sweep, started)),
    )
