"""A culprit search's result in words (rule 10's claims): what was found, how minimal it is,
what was not searched, and the bounds it holds within.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from counterfact.probes.manifest import Application
from counterfact.verdicts.applied import consequence, what_failed
from counterfact.verdicts.wording.shared import seed_list

if TYPE_CHECKING:
    from counterfact.probes.stats import ProbeStats
    from counterfact.verdicts.bisect.power import Underpowered
    from counterfact.verdicts.bisect.search import BisectOutcome


def _names(ids: Sequence[str]) -> str:
    return "{" + ", ".join(ids) + "}"


DISJOINT = (
    "Only disjoint sets were searched (each found set is removed before the next is sought): a "
    "further cause that shares suspects with a set found would not be reported."
)


def _minimality(outcome: BisectOutcome) -> str:
    """How minimal the sets are, as the checks showed."""
    if not outcome.checks:
        return "each is minimal as two-way ddmin finds it (no half of it flipped on its own)."
    unchecked = [c for c in outcome.checks if not c.one_minimal]
    shrunk = [c for c in outcome.checks if c.shrunk_from is not None]
    text = "each is 1-minimal: leaving out any one of its suspects no longer flipped"
    if outcome.decide == "test" and outcome.confirmations:
        text += " on the search's seeds"
    if unchecked:
        text = (
            f"{len(outcome.checks) - len(unchecked)} of {len(outcome.checks)} checked 1-minimal "
            "(leaving out any one suspect no longer flipped); the rest are minimal as ddmin "
            "finds them"
        )
    if shrunk:
        text += "; " + "; ".join(
            f"ddmin's {_names(c.shrunk_from or ())} was shrunk to {_names(c.culprit)}"
            for c in shrunk
        )
    return text + "." + _fresh(outcome)


def _fresh(outcome: BisectOutcome) -> str:
    """``decide: test``: how the held sets' 1-minimality fared on fresh seeds."""
    if outcome.decide != "test" or not outcome.confirmations:
        return ""
    untested = [c for c in outcome.checks if c.fresh is None]
    failed = [(c, c.fresh) for c in outcome.checks if c.fresh is not None and not c.fresh.minimal]
    if not untested and not failed:
        return (
            " Re-tested on the fresh seeds, no one-smaller set flipped either (paired test at "
            "alpha); a miss there can still hide a superfluous suspect."
        )
    text = ""
    if untested:
        text += (
            f" {len(untested)} set(s) are minimal on the search's seeds only: the budget left no "
            "room to re-test their one-smaller sets on fresh seeds, so their 1-minimality is "
            "unconfirmed (raise bisect.max_probes)."
        )
    for c, fresh in failed:
        flips = [
            (k, p) for k, p in zip(fresh.probes, fresh.p_values, strict=True) if p <= fresh.alpha
        ]
        if flips:
            left = [x for x in c.culprit if x not in set(flips[0][0])]
            text += (
                f" {_names(c.culprit)} is not claimed 1-minimal: on the fresh seeds "
                f"{_names(flips[0][0])} flipped without {_names(left)} (p = {flips[0][1]:.3g}), "
                "so that suspect may be superfluous."
            )
        else:
            text += (
                f" {_names(c.culprit)}'s one-smaller sets could not all be decided on the fresh "
                "seeds (failed runs): its 1-minimality is unconfirmed."
            )
    return text


def _incomplete(outcome: BisectOutcome, max_probes: int, noun: str) -> str:
    """A search that found sets and then ran out of budget, or was stopped."""
    sets = "; ".join(_names(c) for c in outcome.culprits)
    why = _why_stopped(outcome, max_probes)
    return (
        f"Confirmed, search incomplete: {len(outcome.culprits)} culprit set(s) found: {sets}. "
        f"Ablating each on its own changed the {noun} on a majority of seeds; "
        f"{_minimality(outcome)} Then {why} while the remaining suspects were searched for "
        "further sets, so there may be more (raise bisect.max_probes, or resume)."
    )


def _switched(outcome: BisectOutcome) -> str:
    """``decide: auto`` turned to the paired test: say why."""
    return (
        f"Decided by the paired test with fresh-seed confirmation (decide: auto): the "
        f"{len(outcome.noise)} probe(s) whose seeds split showed the answers vary by seed, "
        "and the majority rule would have read that noise as culprits."
    )


def _unstable(base: ProbeStats, noun: str) -> str:
    """A baseline probe that failed its gate: never the reference, or only sometimes."""
    if base.flips == base.scored:  # never once the reference: not a matter of stability
        return (
            f"Inconclusive: with nothing ablated the {noun} never matched the reference (0 of "
            f"{base.scored} seeds), so there is nothing for an ablation to change: the reference, "
            "the comparator, the temperature or the context is wrong for this scenario (compare "
            "the reference with a baseline output)."
        )
    return (
        f"Inconclusive: with nothing ablated the {noun} already changed on {base.flips} of "
        f"{base.scored} seeds (seeds {seed_list(base.flipped_seeds)}); the scenario is "
        "unstable, so no ablation can be blamed."
    )


def bisect_claim(
    outcome: BisectOutcome,
    *,
    scenario: str,
    comparator: str,
    samples: int,
    max_probes: int,
    noun: str = "answer",
    baseline: str = "baseline",
    manifests: Application | None = None,
) -> str:
    """The search's result in words, with its bounds (``noun``: ``answer`` when the comparator
    judges the answer, ``output`` when it can only tell the text changed; ``manifests``: the
    probes' manifest check, which a search stopped by it is worded from).
    """
    bounds = (
        f"Bounded by scenario '{scenario}', comparator '{comparator}' and {samples} seeded reruns "
        "per probe."
    )
    if outcome.asked == "auto" and outcome.noise:
        bounds = _switched(outcome) + " " + bounds
    if outcome.underpowered is not None:
        switched = outcome.asked == "auto" and bool(outcome.noise)
        return _underpowered(outcome.underpowered, switched) + " " + bounds
    if outcome.reason in _NOT_APPLIED and manifests is not None:
        return _not_applied(outcome, baseline, manifests) + " " + bounds
    if outcome.reason == "unstable-baseline":
        return _unstable(outcome.probes[0].stats, noun) + " " + bounds
    if outcome.culprits and not outcome.search_complete:
        return _incomplete(outcome, max_probes, noun) + " " + bounds
    if outcome.unconfirmed_found:
        return _found_unconfirmed(outcome, max_probes) + " " + bounds
    if outcome.reason == "interrupted":
        return (
            f"Inconclusive: the search was stopped (Ctrl-C) after {outcome.probes_executed} "
            "probes; no culprit is claimed. Run the same command again to resume: finished runs "
            "are read back."
        )
    if outcome.reason == "spend-exhausted":
        return (
            f"Inconclusive: the spend budget stopped the search after {outcome.probes_executed} "
            "probes; no culprit is claimed. Raise the budget and run the same command again to "
            "resume: finished runs are read back."
        )
    if outcome.reason in _ENDED:
        return _ENDED[outcome.reason].format(max_probes=max_probes) + " " + bounds
    if outcome.reason == "not-reproducible":
        return _not_reproducible(outcome, noun) + " " + bounds
    if outcome.reason == "unconfirmed":
        tried = "; ".join(_names(c.culprit) for c in outcome.confirmations)
        return (
            f"Inconclusive: the search pointed at {tried}, but no set held on fresh seeds "
            f"(paired test at {outcome.confirmations[0].alpha:.3g}); no culprit is claimed. "
            + bounds
        )
    return _confirmed(outcome, samples, noun) + " " + bounds


_ENDED = {
    "runs-failed": (
        "Inconclusive: a probe judged fewer runs than samples (a run failed, or its output "
        "could not be compared with the reference in time), so its flip could not be decided; "
        "see the reasons and the errors in runs.jsonl. No culprit is claimed."
    ),
    "budget-exhausted": (
        "Inconclusive: the probe budget ({max_probes}, baseline included) ran out before the "
        "search finished; no culprit is claimed. Raise bisect.max_probes or rank suspects "
        "better."
    ),
}
"""Searches that ended without a result, in words (``{max_probes}`` filled in)."""


_NOT_APPLIED = ("baseline-not-applied", "baseline-facet-not-reported")


def _not_applied(outcome: BisectOutcome, baseline: str, app: Application) -> str:
    """A search stopped by its manifest check, worded as a sweep's row is (rule 6)."""
    removal = next((m for m in app.mismatches if m.facet == "parts"), None)
    if removal is not None:
        return (
            f"Inconclusive: a probe told to remove {removal.declared['without']} still sent "
            f"{removal.observed} (its manifests list the parts sent), so the runner did not "
            "apply the removal and no flip can be blamed on it: the search stopped after "
            f"{outcome.probes_executed} probe(s) and no culprit is claimed."
        )
    return (
        f"Inconclusive: {what_failed(f'the baseline {baseline!r}', app)} "
        f"{consequence(app, 'The baseline')} in the probes' runs, so no flip can be blamed on an "
        f"ablation: the search stopped after {outcome.probes_executed} probe(s) and no culprit "
        "is claimed."
    )


def _underpowered(short: Underpowered, switched: bool = False) -> str:
    """A ``decide: test`` search that could not reach alpha at its samples: what could not."""
    why = []
    if not short.search_reaches:
        seed0 = " (seed 0 left out: it is the reference)" if short.seed0_excluded else ""
        why.append(
            f"a probe's paired test against the baseline has {short.search_pairs} paired "
            f"seeds{seed0}, whose most extreme outcome gives p = {short.search_floor:.3g} > "
            f"alpha {short.alpha:g}, so no probe could flip"
        )
    if not short.confirm_reaches:
        why.append(
            f"a set's confirmation on {short.samples} fresh seeds at alpha / max_culprits = "
            f"{short.confirm_alpha:.3g} can give at best p = {short.confirm_floor:.3g}, so no "
            "set could hold"
        )
    return (
        f"Inconclusive: underpowered — at {short.samples} samples per probe "
        f"{'; and '.join(why)}. {short.samples_needed} samples per probe can reach alpha. "
        + ("The test ran no probe of its own" if switched else "No probe was run")
        + " and no culprit is claimed (nor is any suspect cleared): raise samples to "
        f"at least {short.samples_needed}."
    )


def _why_stopped(outcome: BisectOutcome, max_probes: int) -> str:
    """Why a search ended before it finished, in words."""
    if outcome.reason == "interrupted":
        return f"the search was stopped (Ctrl-C) after {outcome.probes_executed} probes"
    if outcome.reason == "runs-failed":
        return (
            f"the search stopped after {outcome.probes_executed} probes because its runs failed "
            "(see runs.jsonl)"
        )
    if outcome.reason == "spend-exhausted":
        return f"the spend budget stopped the search after {outcome.probes_executed} probes"
    return f"the probe budget ({max_probes}, baseline included) ran out"


def _found_unconfirmed(outcome: BisectOutcome, max_probes: int) -> str:
    """``decide: test``: sets found, then no budget (or a Ctrl-C) before their confirmation."""
    sets = "; ".join(_names(c) for c in outcome.unconfirmed_found)
    why = _why_stopped(outcome, max_probes)
    return (
        f"Inconclusive: the search found {sets}, but {why} before the set(s) could be re-run "
        "on fresh seeds, and under decide: test a set is claimed only once it holds there; "
        "no culprit is claimed. Raise bisect.max_probes (or resume) to confirm it."
    )


def _not_reproducible(outcome: BisectOutcome, noun: str) -> str:
    """Removing every suspect did not flip: said as exactly that, never as their acquittal."""
    every = outcome.probes[-1].stats if len(outcome.probes) > 1 else None
    detail = f" (it changed on {every.flips} of {every.scored} seeds)" if every else ""
    how = (
        "significantly more often than the baseline (paired test)"
        if outcome.decide == "test"
        else "on a majority of seeds"
    )
    n = outcome.suspects or "the"
    return (
        f"Not reproducible: removing all {n} suspects together did not change the {noun} "
        f"{how}{detail}. That does not clear them: a cause among them can be masked when "
        "removing another suspect undoes its effect (an interaction), or the cause may lie "
        "outside them. Next: bisect a subset of the suspects, or run each as its own arm "
        "(ablate_each) under statistics.decide: test."
    )


def _confirmed(outcome: BisectOutcome, samples: int, noun: str) -> str:
    sets = "; ".join(_names(c) for c in outcome.culprits)
    if outcome.confirmations:
        held = [c for c in outcome.confirmations if c.confirmed]
        ps = ", ".join(f"{_names(c.culprit)} p = {c.p_value:.3g}" for c in held)
        return (
            f"Confirmed: {len(outcome.culprits)} culprit set(s) found by counterfactual reruns: "
            f"{sets}. Each was found by paired tests against the baseline and then held on "
            f"fresh seeds (seeds {held[0].first_seed}..{held[0].first_seed + samples - 1}; {ps}; "
            f"each at {held[0].alpha:.3g} = alpha / max_culprits); {_minimality(outcome)} "
            f"{DISJOINT}"
        )
    return (
        f"Confirmed: {len(outcome.culprits)} culprit set(s) found by counterfactual reruns: "
        f"{sets}. Ablating each set on its own changed the {noun} on a majority of seeds; "
        f"{_minimality(outcome)} {DISJOINT}"
    )
