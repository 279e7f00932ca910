"""Culprit bisection (rule 10): minimal culprit sets by two-way ddmin over ranked ids.

The search is pure: it asks a ``run_probes`` callback to run sets of ablation ids (concurrently,
when it asks for several) and decides from their statistics.

1. Probe 0 is the baseline (nothing ablated) under **zero tolerance**: one flipped seed makes the
   scenario unstable and the result ``inconclusive``.
2. Reproduction gate: ablating every suspect together must flip (majority rule), else
   ``not-reproducible``.
3. ``minimize(set, context)``: a set of one is minimal. Otherwise split at ``ceil(n/2)``; probe
   the first (likelier) half with the context, then the second; recurse into the half that flips.
   If neither flips alone (interference), minimise the first half with the second as context,
   then the second with the first's result as context, and join them.
4. After a minimal set is found, remove it and repeat on the remainder while the remainder still
   flips, up to ``max_culprits`` sets (the remainder is not probed after the last allowed set).
5. Probes are cached by the sorted id set; a cache hit costs nothing. The budget ``max_probes``
   counts executed probes, the baseline included. Exhausting it gives ``inconclusive`` with no
   culprits claimed. A probe whose runs failed also ends the search ``inconclusive``.

``speculative``: when a split is probed, the second half is run at the same time as the first
(only if both are uncached and the budget has room for both). This saves the wall time of one
sequential probe whenever the first half does not flip, and spends one probe (``samples`` runs)
of budget for nothing whenever it does. ``speculative_unused`` counts those.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from counterfact.defaults import ALPHA, MAX_CULPRITS, MAX_PROBES
from counterfact.probes.stats import ProbeStats

# The words now live in counterfact.records; re-exported here for the old import path.
from counterfact.records.vocabulary import BisectReason as BisectReason
from counterfact.records.vocabulary import BisectVerdict as BisectVerdict
from counterfact.verdicts.significance import mcnemar_exact
from counterfact.verdicts.wording import seed_list

Key = tuple[str, ...]


@dataclass(frozen=True)
class BisectProbe:
    """One probe as the search used it, in order."""

    ablated: tuple[str, ...]
    """The ids ablated together, in set order (empty: the baseline)."""
    stats: ProbeStats
    flipped: bool
    cached: bool
    """True when this use was answered from the cache (no runs)."""
    speculative: bool
    """True when the probe was run ahead of need (speculative mode)."""
    p_value: float | None = None
    """``decide: test``: the probe's paired test against the baseline probe (same seeds)."""
    n10: int | None = None
    """``decide: test``: seeds where the probe flipped and the baseline probe did not."""
    n01: int | None = None
    """``decide: test``: seeds where the baseline probe flipped and the probe did not."""


@dataclass(frozen=True)
class Confirmation:
    """``decide: test``: a culprit set re-tested on fresh seeds before it is claimed."""

    culprit: tuple[str, ...]
    first_seed: int
    n10: int
    n01: int
    p_value: float
    alpha: float
    """``statistics.alpha / max_culprits``."""
    confirmed: bool


@dataclass(frozen=True)
class BisectOutcome:
    """What the search found."""

    verdict: BisectVerdict
    reason: BisectReason
    culprits: tuple[tuple[str, ...], ...]
    """Minimal culprit sets in discovery order; empty unless confirmed."""
    probes: tuple[BisectProbe, ...]
    """Every probe use in order, baseline first; cached uses included and marked."""
    probes_executed: int
    speculative_unused: int
    confirmations: tuple[Confirmation, ...] = ()
    """``decide: test`` only: each culprit set's confirmation on fresh seeds."""
    decide: Literal["majority", "test"] = "majority"
    """How the probes were decided (for the claim's words)."""


class ProbeRunner(Protocol):
    """Runs each id set (concurrently) on seeds ``first_seed..first_seed+samples-1`` and returns
    its statistics, in the same order.
    """

    def __call__(self, keys: Sequence[Key], first_seed: int = 0) -> list[ProbeStats]:
        """The statistics of each key's probe."""
        ...


@dataclass(frozen=True)
class Decide:
    """How a probe's flip is decided (rules 10 and 20)."""

    mode: Literal["majority", "test"] = "majority"
    alpha: float = ALPHA
    exclude_seed0: bool = False
    """``test``: leave pair 0 out (the reference is the baseline's own seed 0, rule 13)."""


def paired_p(probe: ProbeStats, base: ProbeStats, exclude_seed0: bool) -> tuple[int, int, float]:
    """``(n10, n01, p)`` of a probe against the baseline probe on the seeds both finished."""
    common = set(probe.seeds) & set(base.seeds)
    if exclude_seed0:
        common.discard(0)
    flipped, base_flipped = set(probe.flipped_seeds), set(base.flipped_seeds)
    n10 = sum(s in flipped and s not in base_flipped for s in common)
    n01 = sum(s in base_flipped and s not in flipped for s in common)
    return n10, n01, mcnemar_exact(n10, n01)


class _BudgetExhausted(Exception):
    pass


class _RunsFailed(Exception):
    pass


class _Search:
    def __init__(
        self,
        run_probes: ProbeRunner,
        samples: int,
        max_probes: int,
        speculative: bool,
        decide: Decide = Decide(),
    ) -> None:
        self.run_probes = run_probes
        self.decide = decide
        self.samples = samples
        self.max_probes = max_probes
        self.speculative = speculative
        self.cache: dict[Key, ProbeStats] = {}
        self.log: list[BisectProbe] = []
        self.executed = 0
        self.ahead: set[Key] = set()

    def _flipped(self, stats: ProbeStats, baseline: bool) -> bool:
        if self.decide.mode == "majority":
            return probe_flipped_for_search(stats, baseline=baseline)
        if baseline:  # rule 20: the baseline must reproduce the reference on a majority
            return (stats.samples - stats.flips) * 2 <= stats.samples
        return self._p(stats) <= self.decide.alpha

    def _p(self, stats: ProbeStats) -> float:
        return paired_p(stats, self.cache[()], self.decide.exclude_seed0)[2]

    def _entry(
        self, ids: tuple[str, ...], stats: ProbeStats, cached: bool, spec: bool
    ) -> BisectProbe:
        flipped = self._flipped(stats, not ids)
        if self.decide.mode != "test" or not ids:
            return BisectProbe(ids, stats, flipped, cached, spec)
        n10, n01, p = paired_p(stats, self.cache[()], self.decide.exclude_seed0)
        return BisectProbe(ids, stats, flipped, cached, spec, p, n10, n01)

    def ask(self, ids: Sequence[str], ahead: Sequence[str] | None = None) -> bool:
        """Did ablating ``ids`` flip? Optionally run ``ahead`` at the same time."""
        key = tuple(sorted(ids))
        baseline = not ids
        if key in self.cache:
            stats = self.cache[key]
            self.ahead.discard(key)
            self.log.append(self._entry(tuple(ids), stats, True, False))
            return self._check(stats, baseline)
        if self.executed >= self.max_probes:
            raise _BudgetExhausted
        batch: list[tuple[tuple[str, ...], bool]] = [(tuple(ids), False)]
        if self.speculative and ahead is not None:
            ahead_key = tuple(sorted(ahead))
            if ahead_key not in self.cache and self.executed + 2 <= self.max_probes:
                batch.append((tuple(ahead), True))
        results = self.run_probes([tuple(sorted(b)) for b, _ in batch])
        for (ordered, spec), stats in zip(batch, results, strict=True):
            self.executed += 1
            k = tuple(sorted(ordered))
            self.cache[k] = stats
            if spec:
                self.ahead.add(k)
            self.log.append(self._entry(ordered, stats, False, spec))
        return self._check(results[0], baseline)

    def _check(self, stats: ProbeStats, baseline: bool) -> bool:
        if stats.samples < self.samples:
            raise _RunsFailed
        return self._flipped(stats, baseline)

    def minimize(self, ids: list[str], context: list[str]) -> list[str]:
        if len(ids) <= 1:
            return list(ids)
        mid = math.ceil(len(ids) / 2)
        top, rest = ids[:mid], ids[mid:]
        if self.ask(top + context, ahead=rest + context):
            return self.minimize(top, context)
        if self.ask(rest + context):
            return self.minimize(rest, context)
        from_top = self.minimize(top, rest + context)
        from_rest = self.minimize(rest, from_top + context)
        return from_top + from_rest

    def confirm(self, culprits: list[list[str]], max_culprits: int) -> list[Confirmation]:
        """Rule 20: re-test each set on fresh seeds ``samples..2*samples-1`` against a fresh
        baseline probe, at ``alpha / max_culprits``.
        """
        first = self.samples
        keys = [(), *(tuple(sorted(c)) for c in culprits)]
        results = self.run_probes(keys, first)
        self.executed += len(keys)
        base, alpha = results[0], self.decide.alpha / max_culprits
        found = []
        for culprit, stats in zip(culprits, results[1:], strict=True):
            n10, n01, p = paired_p(stats, base, exclude_seed0=False)
            ok = stats.samples == self.samples and p <= alpha
            found.append(Confirmation(tuple(culprit), first, n10, n01, p, alpha, ok))
        return found


def bisect(
    suspects: Sequence[str],
    run_probes: ProbeRunner,
    *,
    samples: int,
    max_probes: int = MAX_PROBES,
    max_culprits: int = MAX_CULPRITS,
    speculative: bool = False,
    decide: Decide = Decide(),
) -> BisectOutcome:
    """Find minimal culprit sets among ranked ``suspects`` (see the module docstring)."""
    search = _Search(run_probes, samples, max_probes, speculative, decide)

    def done(
        verdict: BisectVerdict, reason: BisectReason, culprits: list[list[str]]
    ) -> BisectOutcome:
        return BisectOutcome(
            verdict=verdict,
            reason=reason,
            culprits=tuple(tuple(c) for c in culprits),
            probes=tuple(search.log),
            probes_executed=search.executed,
            speculative_unused=len(search.ahead),
            decide=decide.mode,
        )

    outcome = _run(search, suspects, max_culprits, done)
    if decide.mode == "majority" or outcome.reason != "culprits-found":
        return outcome
    if search.executed + 1 + len(outcome.culprits) > max_probes:  # the confirmation's probes
        return done("inconclusive", "budget-exhausted", [])
    checks = search.confirm([list(c) for c in outcome.culprits], max_culprits)
    kept = [list(c.culprit) for c in checks if c.confirmed]
    final = (
        done("confirmed", "culprits-found", kept)
        if kept
        else done("inconclusive", "unconfirmed", [])
    )
    return replace(final, confirmations=tuple(checks))


Done = Callable[[BisectVerdict, BisectReason, list[list[str]]], BisectOutcome]


def _run(search: _Search, suspects: Sequence[str], max_culprits: int, done: Done) -> BisectOutcome:
    """Rule 10's search (the gates as ``search.decide`` says)."""
    try:
        if search.ask([]):
            return done("inconclusive", "unstable-baseline", [])
        candidates = list(suspects)
        if not candidates or not search.ask(candidates):
            return done("not-reproducible", "not-reproducible", [])
        culprits: list[list[str]] = []
        remaining = candidates
        for _ in range(max_culprits):
            found = search.minimize(remaining, [])
            culprits.append(found)
            remaining = [c for c in remaining if c not in set(found)]
            # No probe of the remainder once max_culprits sets are found: it could only spend
            # budget (and, exhausting it, discard the sets already found).
            if len(culprits) >= max_culprits or not remaining or not search.ask(remaining):
                break
        return done("confirmed", "culprits-found", culprits)
    except _BudgetExhausted:
        return done("inconclusive", "budget-exhausted", [])
    except _RunsFailed:
        return done("inconclusive", "runs-failed", [])


def probe_flipped_for_search(stats: ProbeStats, *, baseline: bool) -> bool:
    """How the search reads a probe: zero tolerance for the baseline, the majority rule else."""
    return not stats.stable if baseline else stats.flipped


def interrupted_outcome(
    done: Sequence[tuple[Key, ProbeStats]],
    decide: Decide = Decide(),
) -> BisectOutcome:
    """The outcome of a search stopped by Ctrl-C: the probes finished so far, read as the
    search read them (``decide``), no culprits.
    """
    search = _Search(lambda keys, first_seed=0: [], 0, 0, False, decide)
    search.cache = {key: stats for key, stats in done if not key}
    if decide.mode == "test" and () not in search.cache:
        decide = Decide()  # no baseline probe to test against: the majority reading
        search.decide = decide
    return BisectOutcome(
        verdict="inconclusive",
        reason="interrupted",
        culprits=(),
        probes=tuple(search._entry(key, stats, False, False) for key, stats in done),
        probes_executed=len(done),
        speculative_unused=0,
    )


def _names(ids: Sequence[str]) -> str:
    return "{" + ", ".join(ids) + "}"


def bisect_claim(
    outcome: BisectOutcome,
    *,
    scenario: str,
    comparator: str,
    samples: int,
    max_probes: int,
    noun: str = "answer",
) -> str:
    """The search's result in words, with its bounds (``noun``: ``answer`` when the comparator
    judges the answer, ``output`` when it can only tell the text changed).
    """
    bounds = (
        f"Bounded by scenario '{scenario}', comparator '{comparator}' and {samples} seeded reruns "
        "per probe."
    )
    if outcome.reason == "unstable-baseline":
        base = outcome.probes[0].stats
        return (
            f"Inconclusive: with nothing ablated the {noun} already changed on {base.flips} of "
            f"{base.samples} seeds (seeds {seed_list(base.flipped_seeds)}); the scenario is "
            "unstable, so no ablation can be blamed. " + bounds
        )
    if outcome.reason == "interrupted":
        return (
            f"Inconclusive: the search was stopped (Ctrl-C) after {outcome.probes_executed} "
            "probes; no culprit is claimed. Run the same command again to resume: finished runs "
            "are read back."
        )
    if outcome.reason == "runs-failed":
        return (
            "Inconclusive: a probe finished fewer runs than samples without error, so its flip "
            "could not be decided; see the errors in runs.jsonl. No culprit is claimed. " + bounds
        )
    if outcome.reason == "budget-exhausted":
        return (
            f"Inconclusive: the probe budget ({max_probes}, baseline included) ran out before the "
            "search finished; no culprit is claimed. Raise bisect.max_probes or rank suspects "
            "better. " + bounds
        )
    if outcome.reason == "not-reproducible":
        every = outcome.probes[-1].stats if len(outcome.probes) > 1 else None
        detail = f" (it changed on {every.flips} of {every.samples} seeds)" if every else ""
        how = (
            "significantly more often than the baseline (paired test)"
            if outcome.decide == "test"
            else "on a majority of seeds"
        )
        return (
            f"Not reproducible: ablating every suspect together did not change the {noun} {how}"
            f"{detail}; the cause is not among the suspects, or is not removable by them. " + bounds
        )
    if outcome.reason == "unconfirmed":
        tried = "; ".join(_names(c.culprit) for c in outcome.confirmations)
        return (
            f"Inconclusive: the search pointed at {tried}, but no set held on fresh seeds "
            f"(paired test at {outcome.confirmations[0].alpha:.3g}); no culprit is claimed. "
            + bounds
        )
    sets = "; ".join(_names(c) for c in outcome.culprits)
    if outcome.confirmations:
        held = [c for c in outcome.confirmations if c.confirmed]
        ps = ", ".join(f"{_names(c.culprit)} p = {c.p_value:.3g}" for c in held)
        return (
            f"Confirmed: {len(outcome.culprits)} culprit set(s) found by counterfactual reruns: "
            f"{sets}. Each was found by paired tests against the baseline and then held on "
            f"fresh seeds (seeds {held[0].first_seed}..{held[0].first_seed + samples - 1}; {ps}; "
            f"each at {held[0].alpha:.3g} = alpha / max_culprits). " + bounds
        )
    return (
        f"Confirmed: {len(outcome.culprits)} culprit set(s) found by counterfactual reruns: "
        f"{sets}. Ablating each set on its own changed the {noun} on a majority of seeds; "
        "each is minimal as two-way ddmin finds it (no half of it flipped on its own). " + bounds
    )
