"""The culprit search's steps (rule 10): its probes, their cache and budget, and ddmin itself.

:func:`~counterfact.verdicts.bisect.search.bisect` drives a :class:`Search`: it asks
:meth:`Search.ask` whether removing a set of ids flips the answer (run through the caller's
``run_probes``, cached by the sorted id set, counted against ``max_probes``), narrows a flipping
set with :meth:`Search.minimize` and :meth:`Search.shrink`, and under ``decide: test`` re-tests
each set on fresh seeds with :meth:`Search.confirm`. The records of what it did
(:class:`BisectProbe`, :class:`MinimalityCheck`, :class:`Confirmation`) are defined here with the
steps that make them. Pure: statistics in, decisions out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from counterfact.probes.stats import ProbeStats
from counterfact.verdicts.bisect.curtail import Rule, more_seeds
from counterfact.verdicts.bisect.fresh import FreshCheck
from counterfact.verdicts.stats.significance import mcnemar_exact

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
    decided_early: bool = False
    """``stop_early``: the probe stopped before its last seed, its decision fixed whatever the
    rest would have said (:mod:`~counterfact.verdicts.bisect.curtail`)."""


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
class MinimalityCheck:
    """A found set with each one-element-smaller set probed: none flipped (1-minimal), or the
    budget ran out before every one was probed.
    """

    culprit: tuple[str, ...]
    one_minimal: bool
    probes: tuple[tuple[str, ...], ...]
    """The sets probed with one element left out (each did not flip)."""
    shrunk_from: tuple[str, ...] | None = None
    """The set ddmin first returned, when dropping elements still flipped."""
    fresh: FreshCheck | None = None
    """``decide: test``, a set that held: its one-smaller sets re-probed on the fresh seeds
    (None: not re-tested, so its 1-minimality rests on the search's seeds only)."""


class ProbeRunner(Protocol):
    """Runs each id set (concurrently) on seeds ``first_seed..first_seed+samples-1`` and returns
    its statistics, in the same order.
    """

    def __call__(self, keys: Sequence[Key], first_seed: int = 0) -> list[ProbeStats]:
        """The statistics of each key's probe."""
        ...


Curtail = Callable[[Key, Mapping[int, bool], tuple[int, ...]], int]
"""``stop_early``: given a probe's key, its seeds drawn so far (seed -> flipped) and every seed
it would run, how many more to draw now (0: stop, its decision is fixed)."""


class CurtailingRunner(Protocol):
    """A :class:`ProbeRunner` that can draw each probe's seeds in waves (``stop_early``)."""

    def __call__(
        self, keys: Sequence[Key], first_seed: int = 0, curtail: Curtail | None = None
    ) -> list[ProbeStats]:
        """The statistics of each key's probe, each stopped where ``curtail`` says."""
        ...


class Rules(Protocol):
    """How the search decides a probe (:class:`~counterfact.verdicts.bisect.search.Decide`)."""

    @property
    def mode(self) -> Literal["auto", "majority", "test"]:
        """``majority`` or ``test`` (``auto`` is resolved before a search starts)."""
        ...

    @property
    def alpha(self) -> float:
        """The paired test's level."""
        ...

    @property
    def exclude_seed0(self) -> bool:
        """``test``: leave pair 0 out."""
        ...


def probe_flipped_for_search(stats: ProbeStats, *, baseline: bool) -> bool:
    """How the search reads a probe: zero tolerance for the baseline, the majority rule else."""
    return not stats.stable if baseline else stats.flipped


def paired_p(probe: ProbeStats, base: ProbeStats, exclude_seed0: bool) -> tuple[int, int, float]:
    """``(n10, n01, p)`` of a probe against the baseline probe on the seeds both finished."""
    common = set(probe.seeds) & set(base.seeds)
    if exclude_seed0:
        common.discard(0)
    flipped, base_flipped = set(probe.flipped_seeds), set(base.flipped_seeds)
    n10 = sum(s in flipped and s not in base_flipped for s in common)
    n01 = sum(s in base_flipped and s not in flipped for s in common)
    return n10, n01, mcnemar_exact(n10, n01)


class ProbesSpent(Exception):
    """``max_probes`` probes ran: the search ends with what it found."""


class NotRun(ProbesSpent):
    """A replayed (interrupted) search reached a probe that had not run."""


class RunsFailed(Exception):
    """A probe's runs failed: the search ends ``inconclusive``."""


class Search:
    """The search's state: the probes run (cached by their sorted id set), the budget spent, and
    the ddmin steps that ask them (:meth:`minimize`, :meth:`shrink`, :meth:`confirm`).
    """

    def __init__(
        self,
        run_probes: ProbeRunner,
        samples: int,
        max_probes: int,
        speculative: bool,
        decide: Rules,
        stop_early: bool = False,
    ) -> None:
        self.run_probes = run_probes
        self.decide = decide
        self.stop_early = stop_early and decide.mode in ("majority", "test")
        self.early: set[Key] = set()
        """Probes that stopped before their last seed, their decision fixed."""
        self.samples = samples
        self.max_probes = max_probes
        self.speculative = speculative
        self.cache: dict[Key, ProbeStats] = {}
        self.log: list[BisectProbe] = []
        self.executed = 0
        self.ahead: set[Key] = set()
        self.fresh_base: ProbeStats | None = None
        """``decide: test``: the baseline probe of the confirmation's fresh seeds."""
        self.fresh_early: set[Key] = set()
        """``stop_early``: probes on the fresh seeds that stopped before their last seed."""

    def _flipped(self, stats: ProbeStats, baseline: bool) -> bool:
        if self.decide.mode == "majority":
            return probe_flipped_for_search(stats, baseline=baseline)
        if baseline:  # rule 20: the baseline must reproduce the reference on a majority
            return (stats.scored - stats.flips) * 2 <= stats.scored
        return self._p(stats) <= self.decide.alpha

    def _p(self, stats: ProbeStats) -> float:
        return paired_p(stats, self.cache[()], self.decide.exclude_seed0)[2]

    def _entry(
        self, ids: tuple[str, ...], stats: ProbeStats, cached: bool, spec: bool
    ) -> BisectProbe:
        flipped = self._flipped(stats, not ids)
        early = tuple(sorted(ids)) in self.early
        if self.decide.mode != "test" or not ids:
            return BisectProbe(ids, stats, flipped, cached, spec, decided_early=early)
        n10, n01, p = paired_p(stats, self.cache[()], self.decide.exclude_seed0)
        return BisectProbe(ids, stats, flipped, cached, spec, p, n10, n01, early)

    def _curtailer(self, base: ProbeStats | None, alpha: float, early: set[Key]) -> Curtail:
        """``stop_early``: how many seeds a probe draws next, paired against ``base`` (the
        search's own baseline probe when None) at ``alpha``; the baseline draws all. A probe
        that stops before its last seed is added to ``early``.
        """

        def curtail(key: Key, drawn: Mapping[int, bool], seeds: tuple[int, ...]) -> int:
            if not key:
                return len(seeds) - len(drawn)
            test = self.decide.mode == "test"
            rule = Rule("test" if test else "majority", seeds, alpha)
            if test:
                paired = base if base is not None else self.cache[()]
                first = seeds[0] == 0  # seed 0 is a pair only on the fresh seeds (none there)
                rule = replace(
                    rule,
                    base_flipped=frozenset(paired.flipped_seeds),
                    exclude_seed0=self.decide.exclude_seed0 and first,
                )
            more = more_seeds(rule, drawn)
            if not more and len(drawn) < len(seeds):
                early.add(key)
            return more

        return curtail

    def _run(
        self,
        keys: Sequence[Key],
        first_seed: int = 0,
        base: ProbeStats | None = None,
        alpha: float | None = None,
    ) -> list[ProbeStats]:
        """Run ``keys``' probes; with ``stop_early`` each stops once its decision is fixed
        (paired against ``base`` at ``alpha``: by default the search's baseline and level).
        """
        if not self.stop_early:  # a search's own probes as every runner takes them: keys only
            return self.run_probes(keys, first_seed) if first_seed else self.run_probes(keys)
        runner: CurtailingRunner = self.run_probes  # type: ignore[assignment]
        level = self.decide.alpha if alpha is None else alpha
        early = self.early if first_seed == 0 else self.fresh_early
        return runner(keys, first_seed, curtail=self._curtailer(base, level, early))

    def ask(self, ids: Sequence[str], ahead: Sequence[str] | None = None) -> bool:
        """Did ablating ``ids`` flip? Optionally run ``ahead`` at the same time."""
        key = tuple(sorted(ids))
        baseline = not ids
        if key in self.cache:
            stats = self.cache[key]
            self.ahead.discard(key)
            self.log.append(self._entry(tuple(ids), stats, True, False))
            return self._check(key, stats, baseline)
        if self.executed >= self.max_probes:
            raise ProbesSpent
        batch: list[tuple[tuple[str, ...], bool]] = [(tuple(ids), False)]
        if self.speculative and ahead is not None:
            ahead_key = tuple(sorted(ahead))
            if ahead_key not in self.cache and self.executed + 2 <= self.max_probes:
                batch.append((tuple(ahead), True))
        results = self._run([tuple(sorted(b)) for b, _ in batch])
        for (ordered, spec), stats in zip(batch, results, strict=True):
            self.executed += 1
            k = tuple(sorted(ordered))
            self.cache[k] = stats
            if spec:
                self.ahead.add(k)
            self.log.append(self._entry(ordered, stats, False, spec))
        return self._check(key, results[0], baseline)

    def _check(self, key: Key, stats: ProbeStats, baseline: bool) -> bool:
        if stats.scored < self.samples and key not in self.early:
            raise RunsFailed
        return self._flipped(stats, baseline)

    def minimize(self, ids: list[str], context: list[str]) -> list[str]:
        """A minimal subset of ``ids`` whose removal, with ``context``, still flips (ddmin)."""
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

    def shrink(self, found: list[str], checks: list[MinimalityCheck]) -> list[str]:
        """Make ``found`` 1-minimal: probe it without each element in turn (cached as usual);
        drop any element whose removal still flips, and start over. Appends the check (with
        ``one_minimal`` False if the budget runs out first) before re-raising.
        """
        current = list(found)
        probed: list[tuple[str, ...]] = []
        try:
            changed = True
            while changed and len(current) > 1:
                changed = False
                for element in list(current):
                    trial = [x for x in current if x != element]
                    if self.ask(trial):
                        current, probed, changed = trial, [], True
                        break
                    probed.append(tuple(trial))
        except ProbesSpent:
            checks.append(self._check_of(found, current, probed, done=False))
            raise
        checks.append(self._check_of(found, current, probed, done=True))
        return current

    @staticmethod
    def _check_of(
        found: list[str], current: list[str], probed: list[tuple[str, ...]], done: bool
    ) -> MinimalityCheck:
        shrunk = tuple(found) if current != found else None
        return MinimalityCheck(tuple(current), done, tuple(probed), shrunk)

    def confirm(self, culprits: list[list[str]], max_culprits: int) -> list[Confirmation]:
        """Rule 20: re-test each set on fresh seeds ``samples..2*samples-1`` against a fresh
        baseline probe, at ``alpha / max_culprits``.
        """
        first = self.samples
        keys = [(), *(tuple(sorted(c)) for c in culprits)]
        alpha = self.decide.alpha / max_culprits
        if self.stop_early:  # the fresh baseline first: each set's probe is paired against it
            (base,) = self.run_probes([()], first)
            results = [base, *self._run(keys[1:], first, base, alpha)]
        else:
            results = self.run_probes(keys, first)
        self.executed += len(keys)
        base = results[0]
        self.fresh_base = base
        found = []
        for key, culprit, stats in zip(keys[1:], culprits, results[1:], strict=True):
            n10, n01, p = paired_p(stats, base, exclude_seed0=False)
            whole = stats.scored == self.samples or key in self.fresh_early
            ok = whole and p <= alpha
            found.append(Confirmation(tuple(culprit), first, n10, n01, p, alpha, ok))
        return found
