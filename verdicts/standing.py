"""How sure a verdict is (rule 25): a standing, and one reason per kind of doubt.

The discipline, after the reference design's "how sure" row: the standing is the one verdict on
how sure an answer is; every reason for doubt is a line with the seeds that witness it; a list
cut short says so (``seeds_omitted``) and a count that is a floor says "at least"; nothing is
known from silence — a check that could not run is a reason, not a pass; and a record with no
answer (a baseline row, a row without a successful run, a bisection that ended inconclusive)
gets no standing (``not-assessed``). An inconclusive verdict row is answered with "not yet":
it is ``not-sure``, its first reason ``verdict-inconclusive``.

Pure: tallies and results in, :class:`Doubt` values out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from counterfact.probes.manifest import Application
from counterfact.probes.tally import COMPARISON_DOUBTS, RUN_FLAGS, ArmTally
from counterfact.records.parts import DoubtRecord, SequentialRecord
from counterfact.records.verdicts import VerdictRecord
from counterfact.records.vocabulary import DoubtCode, Standing
from counterfact.verdicts.bisect.ddmin import MinimalityCheck
from counterfact.verdicts.bisect.search import BisectOutcome

SEEDS_SHOWN = 20
"""Witnessing seeds listed per reason; the rest are counted in ``seeds_omitted``."""


@dataclass(frozen=True)
class Doubt:
    """One reason for doubt, before it is recorded."""

    code: DoubtCode
    count: int
    detail: str
    seeds: tuple[int, ...] = ()
    at_least: bool = False

    def record(self) -> DoubtRecord:
        """As recorded on the row: the lowest seeds, the rest counted (one frozen record per
        distinct doubt, shared by the rows that have it: an eval set repeats the same doubts
        over thousands of questions).
        """
        return _doubt_record(self)


@lru_cache(maxsize=4096)
def _doubt_record(doubt: Doubt) -> DoubtRecord:
    shown = sorted(doubt.seeds)[:SEEDS_SHOWN]
    return DoubtRecord(
        code=doubt.code,
        count=doubt.count,
        at_least=doubt.at_least,
        seeds=shown,
        seeds_omitted=max(len(doubt.seeds) - len(shown), 0),
        detail=doubt.detail,
    )


def _seeds(mask: np.ndarray[Any, Any]) -> tuple[int, ...]:
    return tuple(np.flatnonzero(mask).tolist()) if mask.any() else ()


RUN_FLAG_WORDS: dict[DoubtCode, str] = {
    "runs-retried": "took more than one attempt (retry bias: a retried run may answer "
    "differently from a first try)",
    "runs-from-cache": "were taken from the run cache of another sweep",
    "runs-lost-workers": "were resubmitted after their worker or node died",
    "text-escaped": "held text UTF-8 cannot encode and were judged on its escaped form",
    "comparison-timed-out": "ran but their output could not be compared with the reference in "
    "time (the regex comparator's search deadline; simplify comparator.pattern): they are not "
    "samples",
    "judge-unparseable": "ran but the model judge's reply on their output was not a verdict "
    "(its first line must be exactly SAME or DIFFERENT): they are not samples, never flips",
    "judge-unavailable": "ran but the model judge gave no answer on their output (it refused, "
    "or stayed down through its retries): they are not samples; a resume asks it again",
}
"""How each run-level doubt (:data:`~counterfact.probes.tally.RUN_FLAGS`, and the failed
comparisons of :data:`~counterfact.probes.tally.COMPARISON_DOUBTS`) is worded."""


def run_doubts(arm: ArmTally, base: ArmTally) -> list[Doubt]:
    """Doubts from the runs of the arm and its baseline on the arm's seeds ``0..admitted-1``.
    When some seeds have no record (the sweep stopped early), the count of failed runs is a
    floor.
    """
    n = arm.admitted
    out: list[Doubt] = []
    incomplete = bool((~arm.seen[:n] | ~base.seen[:n]).any())
    failed = [(t, t.seen[:n] & ~t.ok[:n]) for t in (arm, base)]
    seeds = _seeds(failed[0][1] | failed[1][1])
    total = int(failed[0][1].sum() + failed[1][1].sum())
    if total:
        out.append(
            Doubt(
                "runs-failed",
                total,
                f"{int(failed[0][1].sum())} of the arm's runs and {int(failed[1][1].sum())} of "
                "the baseline's failed: the verdict rests on fewer seed pairs",
                seeds,
                at_least=incomplete,
            )
        )
    missing = ~arm.seen[:n] | ~base.seen[:n]
    if missing.any():
        out.append(
            Doubt(
                "runs-missing",
                int(missing.sum()),
                "seeds without a record for the arm or the baseline (the sweep stopped early)",
                _seeds(missing),
                at_least=True,
            )
        )
    out += comparison_doubts(arm, base)
    for code, attr, _ in RUN_FLAGS:
        words = RUN_FLAG_WORDS[code]
        a, b = getattr(arm, attr)[:n], getattr(base, attr)[:n]
        if not (a.any() or b.any()):  # the usual case, checked without counting
            continue
        count = int(a.sum() + b.sum())
        if count:
            detail = (
                f"{int(a.sum())} of the arm's runs and {int(b.sum())} of the baseline's {words}"
            )
            out.append(Doubt(code, count, detail, _seeds(a | b)))
    return out


def comparison_doubts(arm: ArmTally, base: ArmTally) -> list[Doubt]:
    """Outputs of the arm or its baseline that could not be compared, one doubt per cause
    (:data:`~counterfact.probes.tally.COMPARISON_DOUBTS`): a comparator's deadline, a judge's
    reply that was no verdict, a judge that gave no answer.
    """
    n = arm.admitted
    a_all, b_all = arm.uncompared[:n], base.uncompared[:n]
    if not (a_all.any() or b_all.any()):  # the usual case, checked without counting
        return []
    out: list[Doubt] = []
    for number, code in enumerate(COMPARISON_DOUBTS, start=1):
        a, b = a_all == number, b_all == number
        if not (a.any() or b.any()):
            continue
        reason = arm.uncompared_reasons.get(code) or base.uncompared_reasons.get(code, "")
        detail = (
            f"{int(a.sum())} of the arm's runs and {int(b.sum())} of the baseline's "
            f"{RUN_FLAG_WORDS[code]} ({reason})"
        )
        out.append(Doubt(code, int(a.sum() + b.sum()), detail, _seeds(a | b)))
    return out


def unreported_doubt(who: str, app: Application, seeds: tuple[int, ...]) -> Doubt | None:
    """Manifests that left a declared facet out (``seeds``: whose did), or None."""
    missing = app.unreported_facets
    if not missing or not seeds:
        return None
    names = ", ".join(f"`{m.facet}`" for m in missing)
    return Doubt(
        "facet-not-reported",
        len(seeds),
        f"{len(seeds)} of the {who}'s run manifests do not report {names}, which it declares: "
        "whether it took effect cannot be checked (report it in the manifest, or do not "
        "declare it)",
        seeds,
    )


def manifest_doubts(arm: ArmTally, base: ArmTally) -> list[Doubt]:
    """Doubts about the manifest check: runs that reported none, manifests that left a declared
    facet out, or no check at all.
    """
    out: list[Doubt] = []
    n = arm.admitted
    for who, tally in (("arm", arm), ("baseline", base)):
        if not tally.arm.facets:
            continue
        unreported = unreported_doubt(who, tally.application(), _seeds(tally.unreported_at[:n]))
        if unreported is not None:
            out.append(unreported)
        ok = tally.ok[:n]
        lacking = ok & ~tally.manifest_at[:n]
        if ok.any() and lacking.all():
            out.append(
                Doubt(
                    "manifest-unchecked",
                    int(lacking.sum()),
                    f"the {who} declares facets but none of its runs reported a manifest: "
                    "whether it took effect is unknown",
                    _seeds(lacking),
                )
            )
        elif lacking.any():
            out.append(
                Doubt(
                    "manifests-missing",
                    int(lacking.sum()),
                    f"{int(lacking.sum())} of the {who}'s successful runs reported no manifest: "
                    f"the check rests on {int(ok.sum() - lacking.sum())} runs",
                    _seeds(lacking),
                )
            )
    return out


def context_doubts(reference_is_seed0: bool, answer_level: bool) -> list[Doubt]:
    """Doubts from how the scenario is judged: the reference and the comparator."""
    out: list[Doubt] = []
    if reference_is_seed0:
        out.append(
            Doubt(
                "reference-is-seed0",
                1,
                "the reference is the baseline's own seed-0 output, not a prior run's answer "
                "(seed 0 is left out of the test)",
                (0,),
            )
        )
    if not answer_level:
        out.append(
            Doubt(
                "text-level-comparator",
                1,
                "the comparator judges the text, not the answer: a rewording of the same answer "
                "counts as a flip",
            )
        )
    return out


def evidence_doubts(
    *,
    has_test: bool,
    statistical: str | None,
    withheld: str | None,
    tier: tuple[str | None, str | None],
    sequential: SequentialRecord | None,
) -> list[Doubt]:
    """Doubts from the test: none, withheld, underpowered, or at odds with the tier."""
    out: list[Doubt] = []
    if withheld is not None:
        out.append(Doubt("test-withheld", 1, f"the test is withheld ({withheld})"))
    elif not has_test:
        out.append(Doubt("no-test", 1, "there is no statistical test (no reference to score)"))
    elif statistical == "underpowered":
        out.append(
            Doubt(
                "test-underpowered",
                1,
                "the test is underpowered: no outcome at these samples could reach alpha",
            )
        )
    verdict, reason = tier
    disagree = (verdict == "confirmed" and statistical in ("not-significant", "underpowered")) or (
        verdict in ("not-confirmed", "inconclusive") and statistical == "significant"
    )
    if disagree:
        out.append(
            Doubt(
                "tier-test-disagree",
                1,
                f"the seed tiers say {verdict} ({reason}) while the test says {statistical}",
            )
        )
    if sequential is not None and sequential.stopped_for == "max-samples":
        out.append(
            Doubt(
                "sequential-cap",
                sequential.seeds_used,
                f"sequential sampling reached its cap ({sequential.max_samples} seeds) undecided",
            )
        )
    return out


def standing_of(doubts: Sequence[Doubt], assessed: bool) -> Standing:
    """``not-assessed`` without an answer; else ``sure`` only when nothing is in doubt."""
    if not assessed:
        return "not-assessed"
    return "not-sure" if doubts else "sure"


def standing_sentence(standing: Standing, doubts: Sequence[Doubt], why: str = "") -> str:
    """The claim's first sentence (``why``: what a not-assessed record lacks)."""
    if standing == "not-assessed":
        return f"Not assessed: {why or 'there is no answer to be sure of'}."
    if standing == "sure":
        return "Sure: every check that bears on this verdict ran and passed."
    parts = []
    for d in doubts:
        floor = "at least " if d.at_least else ""
        parts.append(f"{d.code} ({floor}{d.count})" if d.count > 1 else d.code)
    return f"Not sure: {'; '.join(parts)}."


PROBES_NAMED = 3
"""Probes a bisection's run-level reason names before counting the rest."""


@dataclass(frozen=True)
class SearchManifests:
    """A culprit search's manifest check (rule 6) over every probe's successful runs, against
    the facets the baseline declares (every probe keeps them), with the (probe, seed) of the runs
    that witness each doubt.
    """

    application: Application
    declared: bool
    """The baseline declares facets (else nothing is checked, and nothing is in doubt)."""
    runs: int
    """Successful runs seen."""
    lacking: tuple[tuple[str, int], ...] = ()
    """Successful runs that reported no manifest."""
    unreported: tuple[tuple[str, int], ...] = ()
    """Runs whose manifest left a declared facet out."""


def _probes_named(runs: Sequence[tuple[str, int]]) -> str:
    probes = sorted({probe for probe, _ in runs})
    more = f" and {len(probes) - PROBES_NAMED} more" if len(probes) > PROBES_NAMED else ""
    return ", ".join(probes[:PROBES_NAMED]) + more


def _witnesses(runs: Sequence[tuple[str, int]]) -> tuple[int, ...]:
    return tuple(sorted({seed for _, seed in runs}))


def search_manifest_doubts(m: SearchManifests) -> list[Doubt]:
    """A culprit search's manifest doubts, as a verdict row's (:func:`manifest_doubts`):
    manifests that left a declared facet out, runs that reported none, or no check at all.
    """
    if not m.declared:
        return []
    out: list[Doubt] = []
    missing = m.application.unreported_facets
    if m.unreported and missing:
        names = ", ".join(f"`{x.facet}`" for x in missing)
        detail = (
            f"{len(m.unreported)} of the probes' run manifests do not report {names}, which the "
            f"baseline declares, in probe(s) {_probes_named(m.unreported)}: whether it took "
            "effect cannot be checked (report it in the manifest, or do not declare it)"
        )
        out.append(Doubt("facet-not-reported", len(m.unreported), detail, _witnesses(m.unreported)))
    if m.runs and len(m.lacking) == m.runs:
        detail = (
            "the baseline declares facets but none of the probes' runs reported a manifest: "
            "whether it took effect is unknown"
        )
        out.append(Doubt("manifest-unchecked", len(m.lacking), detail, _witnesses(m.lacking)))
    elif m.lacking:
        detail = (
            f"{len(m.lacking)} of the probes' successful runs reported no manifest, in probe(s) "
            f"{_probes_named(m.lacking)}: the check rests on {m.runs - len(m.lacking)} runs"
        )
        out.append(Doubt("manifests-missing", len(m.lacking), detail, _witnesses(m.lacking)))
    return out


def _run_doubt(code: DoubtCode, runs: Sequence[tuple[str, int]], reason: str = "") -> Doubt:
    """One kind of flagged run in a culprit search: the seeds that witness it (of any probe) and
    the probes it touched, the first few named (``reason``: the first error's message).
    """
    named = _probes_named(runs)
    detail = f"{len(runs)} of the probes' runs {RUN_FLAG_WORDS[code]}, in probe(s) {named}"
    if reason:
        detail += f" ({reason})"
    return Doubt(code, len(runs), detail, _witnesses(runs))


_CHECK_STOPPED = ("baseline-not-applied", "baseline-facet-not-reported")
"""Searches the manifest check stopped: the stop is their reason, not a doubt beside it."""


def _noise_doubt(outcome: BisectOutcome) -> Doubt:
    """Probes whose seeds split under the majority rule: noise it did not measure."""
    stats = {p.ablated: p.stats for p in outcome.probes}
    first = outcome.noise[0]
    shown = "{" + ", ".join(first) + "}" if first else "the baseline"
    detail = (
        f"the answers vary by seed ({shown} flipped on {stats[first].flips} of "
        f"{stats[first].scored} seeds) and decide: majority does not test a flip against that "
        "noise, so a set may be noise; bisect.decide: test (or auto, the default) tests it"
    )
    return Doubt("noise-unmeasured", len(outcome.noise), detail)


def bisect_doubts(
    outcome: BisectOutcome,
    samples: int,
    reference_is_seed0: bool,
    answer_level: bool,
    run_flags: Mapping[DoubtCode, Sequence[tuple[str, int]]] | None = None,
    manifests: SearchManifests | None = None,
    reasons: Mapping[DoubtCode, str] | None = None,
) -> list[Doubt]:
    """Doubts about a culprit search's result: an incomplete search, sets not checked
    1-minimal, probes with failed runs, the probes' runs (``run_flags``: the (probe, seed) of
    each run that was retried, cached, resubmitted or escaped, or whose comparison failed:
    ``reasons`` says why, by code), their manifests, and how the scenario is judged.
    """
    out: list[Doubt] = [
        _run_doubt(code, runs, (reasons or {}).get(code, ""))
        for code, runs in (run_flags or {}).items()
        if runs
    ]
    out += search_manifest_doubts(manifests) if manifests is not None else []
    if outcome.decide == "majority" and outcome.noise:
        out.append(_noise_doubt(outcome))
    if outcome.underpowered is not None:
        power = outcome.underpowered
        detail = (
            f"the test is underpowered: at {power.samples} samples no outcome could reach alpha; "
            f"{power.samples_needed} samples can"
        )
        out.append(Doubt("test-underpowered", 1, detail))
    if not outcome.search_complete and outcome.reason not in _CHECK_STOPPED:
        out.append(
            Doubt(
                "search-incomplete",
                len(outcome.culprits),
                "the search for further culprit sets did not finish (budget or Ctrl-C): more "
                "may exist",
                at_least=True,
            )
        )
    unchecked = [c for c in outcome.checks if not c.one_minimal]
    if unchecked:
        out.append(
            Doubt(
                "minimality-unchecked",
                len(unchecked),
                "set(s) not checked 1-minimal before the budget ran out: a suspect in them may "
                "be superfluous",
            )
        )
    unconfirmed = [c for c in outcome.checks if outcome.decide == "test" and not _fresh_minimal(c)]
    if unconfirmed and outcome.confirmations:
        out.append(
            Doubt(
                "minimality-unconfirmed",
                len(unconfirmed),
                "set(s) whose 1-minimality did not hold, or was not re-tested, on fresh seeds: "
                "a suspect in them may be superfluous",
            )
        )
    short = [p for p in outcome.probes if p.stats.scored < samples]
    if short:
        out.append(
            Doubt(
                "probe-runs-failed",
                len(short),
                "probe(s) finished fewer runs than samples (failed runs, or outputs not compared "
                "in time): decided on fewer seeds",
            )
        )
    return out + context_doubts(reference_is_seed0, answer_level)


def _fresh_minimal(check: MinimalityCheck) -> bool:
    """A held set's 1-minimality held on fresh seeds."""
    return check.fresh is not None and check.fresh.minimal


def standing_cell(row: VerdictRecord) -> str:
    """A table's standing cell: ``sure``, ``not-sure (2)`` (how many reasons), or nothing for a
    row not assessed.
    """
    if row.standing == "not-assessed":
        return ""
    return row.standing if not row.reasons else f"{row.standing} ({len(row.reasons)})"
