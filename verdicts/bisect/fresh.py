"""``decide: test``: a held culprit set's 1-minimality re-tested on fresh seeds (issue 27, 11c).

The search's 1-minimality check probes each one-smaller set on the search's own seeds, and a
probe already run is answered from the cache: the same noisy draw that let ddmin keep a
superfluous suspect (its one-smaller set happened not to reach alpha) also passes the check.
Under per-run noise that is common (``scripts/calibrate_bisect.py``; ``docs/statistics.md``).

So each set that held on fresh seeds has every one-smaller set probed again on those fresh
seeds (``samples..2·samples−1``, never used by the search), each paired against the fresh
baseline probe the confirmation ran, at ``alpha`` (the search's level: the stricter bar for
calling a set minimal). A one-smaller set that flips there means the suspect left out may be
superfluous: the set is still claimed (it held), but not as 1-minimal. A miss on fresh seeds
can still hide a superfluous suspect: the check lowers the rate, it does not remove it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from counterfact.probes.stats import ProbeStats
from counterfact.verdicts.stats.significance import mcnemar_exact

Key = tuple[str, ...]


@dataclass(frozen=True)
class FreshCheck:
    """A held set's one-smaller sets, probed on the fresh seeds."""

    culprit: Key
    probes: tuple[Key, ...]
    """The one-smaller sets probed (sorted ids), in the set's order of the element left out."""
    p_values: tuple[float, ...]
    """Each one's paired test against the fresh baseline probe (same order)."""
    alpha: float
    complete: bool = True
    """Every probe finished all its runs (else a p of 1 stands for one that could not be
    decided, and the set is not called minimal)."""

    @property
    def minimal(self) -> bool:
        """Every one-smaller set was decided on the fresh seeds, and none flipped."""
        return self.complete and all(p > self.alpha for p in self.p_values)

    @property
    def flipped(self) -> tuple[Key, ...]:
        """The one-smaller sets that flipped on the fresh seeds."""
        return tuple(k for k, p in zip(self.probes, self.p_values, strict=True) if p <= self.alpha)


def one_smaller(culprit: Sequence[str]) -> list[Key]:
    """Each set with one element of ``culprit`` left out (none for a set of one)."""
    if len(culprit) <= 1:
        return []
    return [tuple(sorted(x for x in culprit if x != e)) for e in culprit]


def fresh_checks(
    run: Callable[[Sequence[Key], int], list[ProbeStats]],
    culprits: Sequence[Sequence[str]],
    base: ProbeStats,
    first_seed: int,
    alpha: float,
    early: Collection[Key] = (),
) -> list[FreshCheck]:
    """Probe every held set's one-smaller sets on the fresh seeds in one batch (a set of one
    needs none) and test each against ``base``, the fresh baseline probe. ``early``: filled by
    ``run`` with the probes that stopped once their decision was fixed (``stop_early``): they
    count as decided on the seeds they drew.
    """
    wanted = [one_smaller(c) for c in culprits]
    keys = sorted({k for ks in wanted for k in ks})
    stats = dict(zip(keys, run(keys, first_seed), strict=True)) if keys else {}
    out = []
    for culprit, ks in zip(culprits, wanted, strict=True):
        ps = tuple(_p(stats[k], base, scored=0 if k in early else base.scored) for k in ks)
        complete = all(stats[k].scored >= base.scored or k in early for k in ks)
        out.append(FreshCheck(tuple(culprit), tuple(ks), ps, alpha, complete))
    return out


def probes_needed(culprits: Sequence[Sequence[str]]) -> int:
    """Fresh probes :func:`fresh_checks` runs for these sets (shared one-smaller sets once)."""
    return len({k for c in culprits for k in one_smaller(c)})


def _p(probe: ProbeStats, base: ProbeStats, scored: int) -> float:
    """The paired one-sided McNemar p of ``probe`` against ``base``; 1 when runs failed."""
    if probe.scored < scored:
        return 1.0
    common = set(probe.seeds) & set(base.seeds)
    flipped, base_flipped = set(probe.flipped_seeds), set(base.flipped_seeds)
    n10 = sum(s in flipped and s not in base_flipped for s in common)
    n01 = sum(s in base_flipped and s not in flipped for s in common)
    return mcnemar_exact(n10, n01)
