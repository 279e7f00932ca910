"""The arm verdict tiers of rules 7 and 9, with the ``runs-failed`` / ``runs-missing`` check in
front.

Substitutions (an arm whose facets differ from the baseline's) go through every tier below.
Ablations and restorations (an arm that only adds ablation / restoration ids to the baseline)
skip tiers 2 and 3 (rule 9) and their claims name the intervention: "removing 'tool:search'".

Refusal order (the first that applies decides):

0. Fewer successful runs than ``samples`` for the arm or its baseline -> inconclusive,
   ``runs-failed`` when some of those runs ran and failed (their errors are in ``runs.jsonl``),
   ``runs-missing`` when none failed but some seeds were never run (the sweep stopped scheduling
   first: a ``budget``); a row with both says both. Failed and unrun runs are not samples; a
   verdict on fewer seeds than declared would silently change the test.
1. Unstable baseline (zero tolerance: one flipped baseline seed) -> inconclusive,
   ``unstable-baseline``.
2. Manifest checked and the arm not applied -> inconclusive, ``arm-not-applied`` (a manifest
   reported another value), or ``arm-facet-not-reported`` (the manifests left a declared facet
   out, so whether it took effect cannot be checked; see :mod:`~counterfact.verdicts.applied`).
3. Majority flip, the band gates, and the arm's mean similarity is not below the band floor ->
   inconclusive, ``inside-null-band``.
4. Majority flip -> confirmed, ``majority-flip``.
5. Some flips -> inconclusive, ``minority-flip``.
6. No flips -> not-confirmed, ``no-flip``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from counterfact.probes.arms import Intervention
from counterfact.probes.manifest import Application
from counterfact.probes.null_band import NullBand
from counterfact.probes.stats import ProbeStats
from counterfact.records.vocabulary import Reason, Verdict
from counterfact.verdicts.applied import check_failed, consequence, reason_of, what_failed
from counterfact.verdicts.wording.shared import seed_list

UnrunCause = Literal["budget", "stopped"]
"""Why seeds were never run: the ``budget`` stopped scheduling, or the sweep stopped otherwise."""

_UNRUN_WORDS: dict[UnrunCause, str] = {
    "budget": "the budget stopped scheduling; raise budget and rerun the same command to continue",
    "stopped": "the sweep stopped before they ran; run the same command again to resume",
}


@dataclass(frozen=True)
class ScenarioContext:
    """What every arm of one scenario is judged against."""

    scenario: str
    baseline: str
    baseline_stats: ProbeStats
    baseline_stable: bool
    band: NullBand | None
    comparator: str
    """Human description of the flip comparator (``similarity < 0.8``)."""
    samples: int
    """Seeds declared per arm."""
    reference_is_seed0: bool = False
    """The reference is the baseline's own seed-0 output (rules 4 and 13)."""
    baseline_application: Application | None = None
    """The baseline's own manifest check (rule 6): not applied -> every verdict that
    depends on it is inconclusive (``baseline-not-applied``, or ``baseline-facet-not-reported``
    when its manifests only left a declared facet out)."""
    answer_level: bool = False
    """The comparator judges the answer (numeric, contains, regex, custom): claims say the
    *answer* changed; otherwise they say the *output* changed."""
    baseline_unrun: int = 0
    """The baseline's seeds ``0..samples-1`` without a record: never run, not failed."""
    unrun_cause: UnrunCause = "stopped"
    """Why seeds without a record were never run (worded in the claims)."""

    @property
    def unrun_words(self) -> str:
        """Why seeds were not run, and how to run them."""
        return _UNRUN_WORDS[self.unrun_cause]

    @property
    def noun(self) -> str:
        """``answer`` or ``output``: what a flip changed, as far as the comparator can tell."""
        return "answer" if self.answer_level else "output"


@dataclass(frozen=True)
class RunGaps:
    """A challenger's seeds ``0..samples-1`` that are not samples, by why."""

    arm_failed: int
    """The arm's runs that ran and failed."""
    baseline_failed: int
    """The baseline's runs that ran and failed."""
    unrun: int
    """Seeds without a record for the arm or the baseline: never run."""
    uncompared: int = 0
    """Seeds whose output (the arm's or the baseline's) ran but could not be compared with the
    reference in time (a regex comparator's deadline)."""


@dataclass(frozen=True)
class ArmEvidence:
    """One challenger's probe and manifest check."""

    arm: str
    stats: ProbeStats
    application: Application
    outside_null_band: bool | None
    """None when there is no band (no baseline samples) or no mean similarity."""
    intervention: Intervention
    gaps: RunGaps | None = None
    """Why seeds are not samples; None reads every missing sample as a failed run."""

    def run_gaps(self, ctx: ScenarioContext) -> RunGaps:
        """:attr:`gaps`, or every shortfall read as failed runs."""
        if self.gaps is not None:
            return self.gaps
        short = ctx.samples - ctx.baseline_stats.scored
        return RunGaps(ctx.samples - self.stats.scored, short, 0)


@dataclass(frozen=True)
class Decision:
    """A verdict with its machine-readable reason and plain-language claim."""

    verdict: Verdict
    reason: Reason
    claim: str


def _bounds(ctx: ScenarioContext, scored: int) -> str:
    return (
        f"Bounded by scenario '{ctx.scenario}', comparator '{ctx.comparator}' and "
        f"{scored} seeded reruns."
    )


_LIKE_SUBSTITUTION = ("substitution", "placebo")
"""Kinds judged with the manifest and band tiers (a placebo is checked against the baseline's
facets, and its band is the baseline's own)."""


def _baseline_not_applied(ctx: ScenarioContext, doing: str, scored: int) -> Decision | None:
    """The baseline's manifests contradict its facets, or do not report them: nothing can be
    judged against it.
    """
    app = ctx.baseline_application
    if app is None or not check_failed(app):
        return None
    return Decision(
        "inconclusive",
        reason_of(app, "baseline"),
        f"Inconclusive: {what_failed(f'the baseline {ctx.baseline!r}', app)} "
        f"{consequence(app, 'The baseline')}, so {doing} is not compared with what was "
        "declared. " + _bounds(ctx, scored),
    )


def _gates(ev: ArmEvidence, ctx: ScenarioContext, doing: str) -> Decision | None:
    """The refusals that do not depend on the arm's own evidence: failed runs, an unstable
    baseline, a baseline that did not take effect.
    """
    s, base = ev.stats, ctx.baseline_stats
    if s.scored < ctx.samples or base.scored < ctx.samples:
        return _short(ev, ctx)
    if not ctx.baseline_stable and base.scored and base.flips == base.scored:
        return Decision(
            "inconclusive",
            "unstable-baseline",
            f"Inconclusive: the baseline '{ctx.baseline}' differs from the reference on every "
            f"one of its {base.scored} seeds, so the reference may not match what the baseline "
            "answers (a typo, another format); check the scenario's reference, or leave it out "
            "to use the baseline's seed-0 output. No arm can be judged against it. "
            + _bounds(ctx, s.scored),
        )
    if not ctx.baseline_stable:
        return Decision(
            "inconclusive",
            "unstable-baseline",
            f"Inconclusive: the baseline '{ctx.baseline}' itself changed its {ctx.noun} on "
            f"{base.flips} of {base.scored} seeds (seeds {seed_list(base.flipped_seeds)}), so the "
            f"effect of {doing} cannot be told apart from the scenario's own instability. "
            + _bounds(ctx, s.scored),
        )
    return _baseline_not_applied(ctx, doing, s.scored)


def _short(ev: ArmEvidence, ctx: ScenarioContext) -> Decision:
    """Fewer samples than declared: runs that failed (``runs-failed``), else seeds never run
    (``runs-missing``); a row with both names both.
    """
    s, base, n = ev.stats, ctx.baseline_stats, ctx.samples
    gaps = ev.run_gaps(ctx)
    unrun = f"{gaps.unrun} of {n} seeds were not run: {ctx.unrun_words}"
    if gaps.uncompared and not (gaps.arm_failed or gaps.baseline_failed or gaps.unrun):
        return Decision(
            "inconclusive",
            "runs-failed",
            f"Inconclusive: on scenario '{ctx.scenario}', {gaps.uncompared} of {n} seeds ran but "
            "their output could not be compared with the reference in time (the comparator's "
            "deadline) or by the model judge (a reply that was no verdict, or no answer): the "
            "comparison-timed-out, judge-unparseable or judge-unavailable reason says which; "
            "they are not samples, so no verdict is drawn for this arm. " + _bounds(ctx, s.scored),
        )
    if not (gaps.arm_failed or gaps.baseline_failed or gaps.uncompared):
        return Decision(
            "inconclusive",
            "runs-missing",
            f"Inconclusive: {unrun}. Until arm '{ev.arm}' and its baseline '{ctx.baseline}' "
            f"have run every seed on scenario '{ctx.scenario}', no verdict is drawn for this "
            "arm. " + _bounds(ctx, s.scored),
        )
    if not gaps.unrun and not gaps.uncompared:  # failed runs only
        who = f"arm '{ev.arm}'" if s.scored < n else f"baseline '{ctx.baseline}'"
        got = s.scored if s.scored < n else base.scored
        return Decision(
            "inconclusive",
            "runs-failed",
            f"Inconclusive: {who} finished only {got} of {n} seeded runs without error "
            f"on scenario '{ctx.scenario}'; failed runs are not samples, so no verdict is drawn "
            "for this arm. See the errors in runs.jsonl. " + _bounds(ctx, s.scored),
        )
    failed = [
        f"{count} failed of {who}'s runs"
        for count, who in (
            (gaps.arm_failed, f"arm '{ev.arm}'"),
            (gaps.baseline_failed, f"baseline '{ctx.baseline}'"),
        )
        if count
    ]
    if gaps.uncompared:
        failed.append(f"{gaps.uncompared} seed(s) whose output could not be compared in time")
    return Decision(
        "inconclusive",
        "runs-failed",
        f"Inconclusive: on scenario '{ctx.scenario}', {' and '.join(failed)} (see the errors "
        f"in runs.jsonl), and {unrun}. Failed and unrun runs are not samples, so no verdict is "
        "drawn for this arm. " + _bounds(ctx, s.scored),
    )


def decide_arm(ev: ArmEvidence, ctx: ScenarioContext) -> Decision:
    """Apply the tiers, in refusal order, to one challenger."""
    s, base = ev.stats, ctx.baseline_stats
    substitution = ev.intervention.kind in _LIKE_SUBSTITUTION
    doing = ev.intervention.phrase
    gate = _gates(ev, ctx, doing)
    if gate is not None:
        return gate
    app = ev.application
    removal_failed = app is not None and any(m.facet == "parts" for m in app.mismatches)
    if (substitution or removal_failed) and check_failed(app):
        return Decision(
            "inconclusive",
            reason_of(app, "arm"),
            f"Inconclusive: {what_failed(f'arm {ev.arm!r}', app)} {consequence(app, 'The arm')}, "
            "so its runs are not evidence about it. " + _bounds(ctx, s.scored),
        )
    sim = s.similarity
    mean = f"{sim.mean:.3f} ± {sim.stdev:.3f}" if sim else "n/a"
    band = ctx.band
    if substitution and s.flipped and band is not None and band.gates and not ev.outside_null_band:
        return Decision(
            "inconclusive",
            "inside-null-band",
            f"Inconclusive: {doing} flipped the {ctx.noun} on {s.flips} of {s.scored} seeds, "
            f"but its mean similarity to the reference ({mean}) is not below the baseline's own "
            f"floor ({band.floor:.3f}); the change is within the baseline's seed-to-seed noise. "
            "Raise samples or use a domain comparator. " + _bounds(ctx, s.scored),
        )
    if s.flipped:
        band_note = (
            f", below the baseline's null-band floor {band.floor:.3f}"
            if substitution and band is not None and band.gates
            else ""
        )
        switching = ev.intervention.kind == "substitution"
        what = f"switching from '{ctx.baseline}' to '{ev.arm}'" if switching else doing
        return Decision(
            "confirmed",
            "majority-flip",
            f"Confirmed: {what} changed the {ctx.noun} on "
            f"{s.flips} of {s.scored} seeds (seeds {seed_list(s.flipped_seeds)}; mean similarity "
            f"{mean}{band_note}) while the baseline held on all {base.scored}. "
            + _bounds(ctx, s.scored),
        )
    if s.flips > 0:
        return Decision(
            "inconclusive",
            "minority-flip",
            f"Inconclusive: {doing} changed the {ctx.noun} on only {s.flips} of {s.scored} "
            f"seeds (seeds {seed_list(s.flipped_seeds)}), not a majority. Raise samples to "
            "settle it. " + _bounds(ctx, s.scored),
        )
    return Decision(
        "not-confirmed",
        "no-flip",
        f"Not confirmed: {doing} left the reference {ctx.noun} in place on all {s.scored} seeds "
        f"(mean similarity {mean}); on this scenario it is not distinguishable from "
        f"'{ctx.baseline}'. "
        "This says nothing about other scenarios. " + _bounds(ctx, s.scored),
    )


def baseline_claim(ctx: ScenarioContext) -> str:
    """The claim line of the baseline's own record."""
    base = ctx.baseline_stats
    failed = ctx.samples - base.scored - ctx.baseline_unrun
    if failed > 0:
        unrun = f" ({ctx.baseline_unrun} more were not run)" if ctx.baseline_unrun else ""
        return (
            f"Baseline '{ctx.baseline}' has only {base.scored} of {ctx.samples} scored runs"
            f"{unrun}: the others failed, or ran but their output could not be compared with "
            "the reference (runs.jsonl's errors and the challengers' reasons say which); "
            "every challenger on this scenario is inconclusive (runs-failed)."
        )
    if ctx.baseline_unrun:
        return (
            f"Baseline '{ctx.baseline}': {ctx.baseline_unrun} of {ctx.samples} seeds were not "
            f"run: {ctx.unrun_words}. Every challenger on this scenario is inconclusive until "
            "they have (runs-missing)."
        )
    app = ctx.baseline_application
    if app is not None and check_failed(app):
        return (
            f"Inconclusive as a baseline: {what_failed(f'baseline {ctx.baseline!r}', app)} "
            f"{consequence(app, 'It')}, so no challenger is judged against it "
            f"({reason_of(app, 'baseline')})."
        )
    if ctx.baseline_stable:
        seeds = f"all {base.scored} seeds"
        if ctx.reference_is_seed0:
            seeds = (
                f"all {base.scored} seeds — its stability rests on the other "
                f"{base.scored - 1}: seed 0's output is the reference, so it compares with itself"
            )
        return (
            f"Baseline '{ctx.baseline}' reproduced the reference on {seeds}; it is stable and "
            "the challengers are judged against it."
        )
    return (
        f"Baseline '{ctx.baseline}' flipped on {base.flips} of {base.scored} seeds "
        f"(seeds {seed_list(base.flipped_seeds)}); it is unstable and every challenger is "
        "inconclusive."
    )
