"""``bisect.stop_early``: a probe stops drawing its seeds once the rest cannot change its decision.

Curtailed sampling (deterministic curtailment of a fixed-n test): a probe's seeds are drawn in
their fixed order ``first_seed, first_seed+1, …``, and after each wave the search asks whether
*every* outcome of the seeds not drawn yet leads to the same decision as the full ``samples``
seeds would give. If so the probe stops there: the decision it stops at **is** the full-n
decision, whatever the remaining seeds would have said, so curtailment changes what a probe
costs and never what it decides (no peeking bias: the level of the test, its power and every
claim are those of the full-n test; only the p-value recorded is the one of the seeds drawn).

The decisions curtailed are the search's own (``verdicts.bisect.search``):

- ``majority``: flipped iff ``flips * 2 > samples``;
- ``test``: flipped iff the one-sided exact McNemar p of the probe against the baseline probe
  (paired by seed, seed 0 left out when it is the reference) is at most ``alpha``.

Both are monotone in the outcome of each seed (a flip on a seed can only move the decision
towards "flipped": under ``test``, a flip on a seed where the baseline held adds to ``n10``, a
hold where the baseline flipped adds to ``n01``, and the one-sided p falls in ``n10`` and rises
in ``n01``). So all outcomes of the remaining seeds agree iff the two extreme outcomes agree —
every remaining seed flipped, and none — which :func:`settled` checks in constant time; the
tests check it against every outcome by enumeration.

The baseline probe is never curtailed: its seeds are the pairs every other probe is tested on.
A probe with a failed or uncompared run is not curtailed either (it draws all its seeds, and
the search treats it as the full-n search would: its runs failed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from counterfact.verdicts.stats.significance import mcnemar_exact


@dataclass(frozen=True)
class Rule:
    """How a probe is decided on its ``seeds`` (all of them: the full-n decision)."""

    mode: Literal["majority", "test"]
    seeds: tuple[int, ...]
    """Every seed the probe would run, in drawing order."""
    alpha: float = 0.05
    base_flipped: frozenset[int] = frozenset()
    """``test``: the seeds on which the baseline probe flipped."""
    exclude_seed0: bool = False
    """``test``: seed 0 is not a pair (the reference is the baseline's own seed 0)."""

    def decides(self, outcome: Mapping[int, bool]) -> bool:
        """The full-n decision for one outcome of every seed (seed -> flipped)."""
        if self.mode == "majority":
            return sum(outcome[s] for s in self.seeds) * 2 > len(self.seeds)
        n10, n01 = self._pairs(outcome)
        return mcnemar_exact(n10, n01) <= self.alpha

    def _pairs(self, outcome: Mapping[int, bool]) -> tuple[int, int]:
        n10 = n01 = 0
        for seed, flipped in outcome.items():
            if self.exclude_seed0 and seed == 0:
                continue
            base = seed in self.base_flipped
            n10 += flipped and not base
            n01 += base and not flipped
        return n10, n01


def settled(rule: Rule, drawn: Mapping[int, bool]) -> bool | None:
    """The full-n decision if the seeds ``drawn`` (seed -> flipped) already fix it, else None.

    The decision returned is the one :meth:`Rule.decides` gives for *every* outcome of the
    seeds of ``rule.seeds`` not in ``drawn``.
    """
    rest = [s for s in rule.seeds if s not in drawn]
    if not rest:
        return rule.decides(drawn)
    high = rule.decides({**drawn, **dict.fromkeys(rest, True)})
    low = rule.decides({**drawn, **dict.fromkeys(rest, False)})
    return high if high == low else None


def more_seeds(rule: Rule, drawn: Mapping[int, bool]) -> int:
    """How many more seeds (in order) to draw before the decision could first be fixed: 0 when
    ``drawn`` fixes it; else the fewest next seeds of which some outcome fixes it (drawing them
    together costs no seed that drawing them one at a time would not, and saves the waits).
    """
    if settled(rule, drawn) is not None:
        return 0
    rest = [s for s in rule.seeds if s not in drawn]
    return min(_first_fixing(rule, drawn, rest, value) for value in (True, False))


def _first_fixing(rule: Rule, drawn: Mapping[int, bool], rest: Sequence[int], value: bool) -> int:
    """The fewest next seeds of ``rest`` that, all ``value``, fix the decision (``len(rest)``
    at most). Each decision is monotone in the seeds' outcomes, so the extreme outcome is the
    likeliest to fix it, and once ``r`` seeds fix it so do ``r + 1``: a binary search.
    """
    lo, hi = 1, len(rest)  # the answer is in [lo, hi]; all of rest always fixes it
    while lo < hi:
        mid = (lo + hi) // 2
        if settled(rule, {**drawn, **dict.fromkeys(rest[:mid], value)}) is not None:
            hi = mid
        else:
            lo = mid + 1
    return lo


def drawn_of(seeds: Sequence[int], flipped: Sequence[int]) -> dict[int, bool]:
    """A probe's scored seeds as seed -> flipped."""
    flips = set(flipped)
    return {s: s in flips for s in seeds}
