"""Power of the paired test, and the samples that reach a power asked for (``counterfact plan``).

The test is the engine's exact McNemar
(:func:`~counterfact.verdicts.stats.significance.mcnemar_exact`) on the ``n10`` / ``n01``
discordant seed pairs, in the direction of ``statistics.alternative``. With ``n`` pairs whose
cells have probabilities ``p10`` (arm flips, baseline holds) and ``p01``, the discordant count is
``M ~ Binomial(n, p10 + p01)`` and, given ``M = m``, ``n10 ~ Binomial(m, p10 / (p10 + p01))``.
The test rejects at level ``a`` when ``n10 >= c_m``, the smallest count whose null tail
``P(Binomial(m, 1/2) >= c)`` is at most ``a`` (``less``: the mirror; ``two-sided``: either tail
at ``a/2``, which is the binomial test's two-sided p for the symmetric null). The power is
therefore the exact sum

    power = sum_m P(M = m) * P(n10 >= c_m | m)

(scipy's binomial distribution; no simulation). Pooled across scenarios, the summed counts are a
sum of binomials with different probabilities; that power is simulated
(:func:`pooled_power`, ``draws`` draws from a seeded generator), with its standard error stated.

The family's adjustment is planned as its Bonferroni bound: the per-test level is ``alpha / K``
for Holm and Benjamini-Hochberg over ``K`` tests (each rejects at least what Bonferroni rejects,
so the power is a lower bound), ``alpha / (K * H_K)`` for Benjamini-Yekutieli, ``alpha`` without
adjustment.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import binom

from counterfact.records.vocabulary import Adjustment, Alternative
from counterfact.verdicts.stats.significance import TOLERANCE

CAP = 100_000
"""The most samples per arm a plan searches."""
FRESH = 1_000_003
"""Added to a simulated search's seed for the power given at its recommendation: draws
independent of the search's, so the figure carries no winner's curse (issue 43 item 4: the
search keeps the first count whose noisy estimate clears the target, which biases that estimate
upward)."""


def per_test_level(alpha: float, adjust: Adjustment, family: int) -> float:
    """The level one test of a family of ``family`` is planned at (its Bonferroni bound)."""
    k = max(family, 1)
    if adjust == "none":
        return alpha
    if adjust == "by":
        return alpha / (k * sum(1 / i for i in range(1, k + 1)))
    return alpha / k


Array = np.ndarray[Any, Any]


def least_tail_count(dist: Any, top: Array | int, level: float) -> Array:
    """The smallest count ``c`` with ``P(X >= c) <= level`` for the frozen discrete scipy
    distribution ``dist`` (array-valued), ``top + 1`` when no count reaches it: ``ppf`` gives it
    up to floating point, one step either way is checked against ``sf``.
    """
    a = level * (1 + TOLERANCE)
    c = dist.ppf(1 - a) + 1
    c = np.where(dist.sf(c - 2) <= a, c - 1, c)
    c = np.where(dist.sf(c - 1) > a, c + 1, c)
    out: Array = np.minimum(c, np.asarray(top) + 1)
    return out


def critical(m: Array, level: float) -> Array:
    """Per discordant count ``m``: the smallest ``c`` with ``P(Binomial(m, 1/2) >= c) <= level``
    (``m + 1`` when no count reaches it).
    """
    return least_tail_count(binom(m, 0.5), m, level)


def _oriented(p10: float, p01: float, alternative: Alternative) -> tuple[float, float]:
    return (p01, p10) if alternative == "less" else (p10, p01)


def paired_power(n: int, p10: float, p01: float, level: float, alternative: Alternative) -> float:
    """Exact power of the paired test at ``n`` pairs (see the module docstring)."""
    q = p10 + p01
    if n <= 0 or q <= 0:
        return 0.0
    m = np.arange(n + 1)
    weight = binom.pmf(m, n, min(q, 1.0))
    towards, _ = _oriented(p10, p01, alternative)
    share = towards / q
    if alternative == "two-sided":
        c = critical(m, level / 2)
        hit = binom.sf(c - 1, m, share) + binom.cdf(m - c, m, share)
    else:
        c = critical(m, level)
        hit = binom.sf(c - 1, m, share)
    return float(min(1.0, np.sum(weight * hit)))


@dataclass(frozen=True)
class Cells:
    """One scenario's pair-cell probabilities (from a pilot, or with a declared effect)."""

    p10: float
    p01: float


@dataclass(frozen=True)
class Mixed:
    """A scenario whose pair cells are one of several states, each with its weight: a declared
    effect added per question (:func:`counterfact.verdicts.planning.power_evalset.question_states`:
    a question whose seeds repeat moves whole or not at all). A sweep's seeds all come from one
    state, drawn once per simulated sweep; exact powers are the weighted sum over the states.
    """

    states: tuple[Cells, ...]
    weights: tuple[float, ...]

    @property
    def mean(self) -> Cells:
        """The weighted mean of the states' cells (what a scenario's plan line shows)."""
        w = self.weights
        p10 = sum(x * c.p10 for x, c in zip(w, self.states, strict=True))
        p01 = sum(x * c.p01 for x, c in zip(w, self.states, strict=True))
        return Cells(p10, p01)


def mean_of(cells: Cells | Mixed) -> Cells:
    """Plain cells as they are, a mixture's weighted mean."""
    return cells if isinstance(cells, Cells) else cells.mean


def states_of(cells: Cells | Mixed) -> list[tuple[Cells, float]]:
    """Each state and its weight (one state of weight 1 for plain cells)."""
    if isinstance(cells, Cells):
        return [(cells, 1.0)]
    return [(c, w) for c, w in zip(cells.states, cells.weights, strict=True) if w > 0]


def mixed_power(n: int, cells: Cells | Mixed, level: float, alternative: Alternative) -> float:
    """Exact power of the paired test at ``n`` pairs: the weighted sum over the states."""
    return float(
        sum(w * paired_power(n, c.p10, c.p01, level, alternative) for c, w in states_of(cells))
    )


def state_rows(
    cells: Cells | Mixed, rng: np.random.Generator, draws: int
) -> list[tuple[Cells, Array | slice]]:
    """Per state, the simulated sweeps (rows) drawn in it: one state takes every row (and no
    draw from ``rng``, so plain cells see the same stream as before states existed).
    """
    parts = states_of(cells)
    if len(parts) == 1:
        return [(parts[0][0], slice(None))]
    weights = np.asarray([w for _, w in parts])
    pick = rng.choice(len(parts), size=draws, p=weights / weights.sum())
    return [(c, np.flatnonzero(pick == k)) for k, (c, _) in enumerate(parts)]


def pooled_power(
    n: int,
    cells: Sequence[Cells | Mixed],
    level: float,
    alternative: Alternative,
    rng: np.random.Generator,
    draws: int = 20_000,
) -> tuple[float, float]:
    """Simulated power of the stratified test (counts summed over scenarios) at ``n`` pairs per
    scenario, and its standard error; a :class:`Mixed` scenario draws its state once per sweep.
    """
    towards = np.zeros(draws, dtype=np.int64)
    away = np.zeros(draws, dtype=np.int64)
    for scenario in cells:
        for cell, rows in state_rows(scenario, rng, draws):
            t, a = _oriented(cell.p10, cell.p01, alternative)
            rest = max(0.0, 1.0 - t - a)
            size = draws if isinstance(rows, slice) else rows.size
            counts = rng.multinomial(n, [t, a, rest], size=size)
            towards[rows] += counts[:, 0]
            away[rows] += counts[:, 1]
    m = towards + away
    if alternative == "two-sided":
        c = critical(m, level / 2)
        hits = (towards >= c) | (towards <= m - c)
    else:
        hits = towards >= critical(m, level)
    hits &= m > 0
    power = float(np.mean(hits))
    return power, math.sqrt(max(power * (1 - power), 1e-12) / draws)


def samples_for(
    target: float, power_at: Callable[[int], float], start: int = 2, cap: int = CAP
) -> tuple[int, float] | None:
    """The smallest sample count (searched by doubling, then bisection) whose power reaches
    ``target``, with that power; None when even ``cap`` does not.

    The power of an exact test is not monotone in ``n`` (it saw-tooths with the discreteness of
    the critical values), so the count found is the first that reaches the target on the
    bisection's path: the next few counts may dip slightly below it.
    """
    low, high = max(start, 1), max(start, 1)
    while power_at(high) < target:
        if high >= cap:
            return None
        low, high = high, min(2 * high, cap)
    while high - low > 1:
        mid = (low + high) // 2
        if power_at(mid) >= target:
            high = mid
        else:
            low = mid
    n = low if power_at(low) >= target else high
    return n, power_at(n)
