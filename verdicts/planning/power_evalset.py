"""Power of the arm-level test over an eval set of ``Q`` questions at ``n`` seeds each, simulated
from a pilot (``counterfact plan`` on a pilot with several questions).

**Model.** A two-level bootstrap of the pilot (Davison and Hinkley (1997), Bootstrap Methods and
their Application, 3.8, "multi-stage sampling"): a simulated sweep draws ``Q`` questions with
replacement from the pilot's tested questions, and for each its ``n`` seed pairs from that
question's own pilot pair cells (``n10 / pairs`` the arm flipped and the baseline held,
``n01 / pairs`` the reverse; the rest concordant). A question whose pilot seeds never varied
(every seed the same outcome on each side) repeats that outcome on every simulated seed, so a
pilot of identical epochs plans identical epochs, and one whose seeds varied plans seeds that vary
as much. The challengers share the question draws (one eval set), each draws its own seeds.

**A declared effect** (``--effect D``, :func:`effect_pool`) is added the way that structure adds
it, per question (issue 43): the pilot's own difference is removed by symmetrising each question
(its arm and baseline sides swapped with probability 1/2: the sign-flip test's null), then the arm
moves a share ``pi`` of its held seeds to flipped (``less``: of its flipped seeds to held), ``pi``
chosen so the mean difference over questions is ``D``. A question whose pilot seeds repeat moves
whole (with probability ``pi``, every seed at once: on a copies program a fraction ``D`` of the
questions move), one whose seeds varied moves each seed independently with probability ``pi``.
The pool is then a weighted mixture of pair-cell states, each question's states sharing its
``1/Q`` of the draws.

**Test.** Each simulated sweep is judged by the engine's own arm-level test: the sign-flip test
over questions (:func:`counterfact.verdicts.stats.clustered.clustered_test`), its p-values adjusted
over the challengers (:func:`counterfact.verdicts.stats.multiplicity.adjust`) and decided by
:func:`counterfact.verdicts.family.verdict_of` with the adjustment's best factor (so a ``Q`` too
small for any outcome to reach alpha counts as not significant). Above :data:`EXACT_UP_TO`
questions, where the exact sign-flip distribution costs milliseconds a sweep, its normal
approximation with continuity correction stands in (the same tail ``clustered`` falls back to
below FFT noise): ``T = sum a_q`` against ``sqrt(sum a_q^2)``.

**Prediction.** :func:`predicted_questions` gives the normal-approximation ``Q`` (per-question
difference with mean ``mu`` and second moment ``m2`` under the bootstrap: power ``~ Phi((sqrt(Q)
mu - z sqrt(m2)) / sigma)``), only to choose where the simulation looks first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import norm

from counterfact.records.vocabulary import Adjustment, Alternative
from counterfact.verdicts.family import verdict_of
from counterfact.verdicts.stats.clustered import QuestionCounts, clustered_test, floor_over
from counterfact.verdicts.stats.multiplicity import adjust, best_factor

Array = np.ndarray[Any, Any]

EXACT_UP_TO = 500
"""Questions up to which each simulated sweep runs the exact sign-flip test."""
CHUNK = 2_000_000
"""Simulated (sweep, question) cells drawn at once (memory stays near 100 MB at 100,000
questions)."""


@dataclass(frozen=True)
class Pool:
    """One challenger's pilot questions: their pair-cell probabilities, as arrays."""

    p10: Array
    p01: Array
    weights: Array | None = None
    """Each state's probability (None: the states are the questions, drawn uniformly)."""
    capped: bool = False
    """A declared effect exceeded what the pilot's held seeds can take (planned at the most)."""

    def __post_init__(self) -> None:
        if self.p10.shape != self.p01.shape or self.p10.size == 0:
            msg = f"a pool needs matching, non-empty p10 and p01; got {self.p10.shape}, "
            msg += f"{self.p01.shape}"
            raise ValueError(msg)

    @property
    def probabilities(self) -> Array:
        """Each state's probability."""
        if self.weights is None:
            return np.full(self.p10.size, 1.0 / self.p10.size)
        return self.weights

    @property
    def degenerate(self) -> bool:
        """Every question's seeds repeat one outcome (simulated seeds add nothing)."""
        return bool(np.all(np.isin(self.p10, (0.0, 1.0)) & np.isin(self.p01, (0.0, 1.0))))


def pool_of(cells: Sequence[tuple[float, float]]) -> Pool:
    """A pool from ``(p10, p01)`` per question."""
    arr = np.asarray(cells, dtype=float).reshape(-1, 2)
    return Pool(arr[:, 0].copy(), arr[:, 1].copy())


@dataclass(frozen=True)
class EvalDesign:
    """The arm-level test's settings: level, adjustment over the challengers, direction."""

    alpha: float
    adjust: Adjustment
    alternative: Alternative


def _moved(pool: Pool, picks: Array, pairs: int, rng: np.random.Generator) -> tuple[Array, Array]:
    """``n10`` and ``n01`` per (sweep, question): ``n10 ~ Bin(pairs, p10)``, then ``n01`` from
    the pairs left, ``~ Bin(pairs - n10, p01 / (1 - p10))`` (the multinomial, drawn in two).
    """
    if pool.weights is None:
        idx = (picks * pool.p10.size).astype(np.int64)
    else:
        edges = np.cumsum(pool.weights)
        idx = np.minimum(np.searchsorted(edges, picks, side="right"), pool.p10.size - 1)
    p10, p01 = pool.p10[idx], pool.p01[idx]
    n10 = rng.binomial(pairs, np.clip(p10, 0.0, 1.0))
    rest = np.where(p10 < 1.0, p01 / np.where(p10 < 1.0, 1.0 - p10, 1.0), 0.0)
    n01 = rng.binomial(pairs - n10, np.clip(rest, 0.0, 1.0))
    return n10, n01


def _normal_p(moved: Array, alternative: Alternative) -> Array:
    """Per sweep (row), the sign-flip test's normal tail with continuity correction."""
    t = moved.sum(axis=1).astype(float)
    sd = np.sqrt((moved.astype(float) ** 2).sum(axis=1))
    safe = np.where(sd > 0, sd, 1.0)
    upper = np.where(sd > 0, norm.sf((t - 1) / safe), 1.0)
    lower = np.where(sd > 0, norm.cdf((t + 1) / safe), 1.0)
    if alternative == "greater":
        return np.asarray(np.minimum(upper, 1.0))
    if alternative == "less":
        return np.asarray(np.minimum(lower, 1.0))
    return np.asarray(np.minimum(1.0, 2 * np.minimum(upper, lower)))


def _exact_p(n10: Array, n01: Array, pairs: int, design: EvalDesign) -> Array:
    """Per sweep, the engine's clustered test's p-value."""
    out = np.ones(n10.shape[0])
    for s in range(n10.shape[0]):
        counts = [
            QuestionCounts("", a, b, 0, pairs)
            for a, b in zip(n10[s].tolist(), n01[s].tolist(), strict=True)
        ]
        test = clustered_test(counts, design.alternative, design.alpha)
        out[s] = 1.0 if test is None else test.p_value
    return out


def significant(
    pools: Sequence[Pool],
    questions: int,
    pairs: int,
    design: EvalDesign,
    sweeps: int,
    seed: int,
    exact_up_to: int = EXACT_UP_TO,
) -> Array:
    """Per simulated sweep (rows) and challenger (columns): the arm-level verdict was
    ``significant``. The same ``seed`` draws the same questions at every seed count.
    """
    rng = np.random.default_rng(seed)
    p = np.ones((sweeps, len(pools)))
    chunk = max(1, min(sweeps, CHUNK // max(questions, 1)))
    for first in range(0, sweeps, chunk):
        rows = slice(first, min(first + chunk, sweeps))
        picks = rng.random((rows.stop - first, questions))
        for c, pool in enumerate(pools):
            n10, n01 = _moved(pool, picks, pairs, rng)
            if questions <= exact_up_to:
                p[rows, c] = _exact_p(n10, n01, pairs, design)
            else:
                p[rows, c] = _normal_p(n10 - n01, design.alternative)
    factor = best_factor(design.adjust, len(pools))
    floor = floor_over(questions, design.alternative)
    hits = np.zeros((sweeps, len(pools)), dtype=bool)
    for s in range(sweeps):
        adjusted = adjust(p[s].tolist(), design.adjust)
        hits[s] = [verdict_of(floor, q, design.alpha, factor) == "significant" for q in adjusted]
    return hits


def power_at(
    pools: Sequence[Pool],
    questions: int,
    pairs: int,
    design: EvalDesign,
    sweeps: int,
    seed: int,
    exact_up_to: int = EXACT_UP_TO,
) -> list[tuple[float, float]]:
    """Per challenger, the simulated power and its standard error."""
    hits = significant(pools, questions, pairs, design, sweeps, seed, exact_up_to)
    out = []
    for share in hits.mean(axis=0).tolist():
        out.append((share, math.sqrt(max(share * (1 - share), 1e-12) / sweeps)))
    return out


def predicted_questions(
    pool: Pool, pairs: int, design: EvalDesign, target: float, challengers: int
) -> float | None:
    """The normal approximation's questions for ``target`` power (None: the pool shows no
    effect the test's way), at the Bonferroni level over the challengers.
    """
    w = pool.probabilities
    d = pool.p10 - pool.p01
    mu = pairs * float(np.sum(w * d))
    var_within = pairs * (pool.p10 + pool.p01 - d * d)
    m2 = float(np.sum(w * (var_within + (pairs * d) ** 2)))
    sigma = math.sqrt(max(m2 - mu * mu, 0.0))
    level = design.alpha / best_factor(design.adjust, challengers)
    if design.alternative == "less":
        mu = -mu
    elif design.alternative == "two-sided":
        mu, level = abs(mu), level / 2
    if mu <= 0:
        return None
    z = float(norm.isf(level))
    z_power = float(norm.ppf(target))
    return max(((z * math.sqrt(m2) + z_power * sigma) / mu) ** 2, 1.0)


@dataclass(frozen=True)
class Question:
    """One pilot question's pair-cell rates: arm flipped only, baseline flipped only, both."""

    p10: float
    p01: float
    p11: float

    @property
    def repeats(self) -> bool:
        """Every pilot seed gave one outcome on each side (it moves whole under an effect)."""
        return all(x in (0.0, 1.0) for x in (self.p10, self.p01, self.p11))


def _capacity(p10: float, p01: float, p11: float, less: bool) -> float:
    """The share of seeds the arm can move: held seeds (``greater``), flipped ones (``less``)."""
    return p10 + p11 if less else 1.0 - p10 - p11


def _shifted(p10: float, p01: float, p11: float, pi: float, less: bool) -> tuple[float, float]:
    """``(p10, p01)`` once a share ``pi`` of the arm's held (``less``: flipped) seeds move."""
    if less:  # arm-flipped seeds become held: p10 -> p00, p11 -> p01
        return (1 - pi) * p10, p01 + pi * p11
    return p10 + pi * (1.0 - p10 - p01 - p11), (1 - pi) * p01


def effect_pool(questions: Sequence[Question], effect: float, alternative: Alternative) -> Pool:
    """The pool for a declared effect (module docstring): each question symmetrised, then moved
    by ``pi`` whole (its seeds repeat) or per seed (they vary).
    """
    less = alternative == "less"
    mirrored = [(q, m) for q in questions for m in (False, True)]
    room = float(np.mean([_capacity(*_cells(q, m), less) for q, m in mirrored]))
    pi = min(1.0, effect / room) if room > 0 else 0.0
    states: list[tuple[float, float, float]] = []
    share = 0.5 / len(questions)
    for q, m in mirrored:
        cells = _cells(q, m)
        if q.repeats:
            states.append((cells[0], cells[1], share * (1 - pi)))
            states.append((*_shifted(*cells, 1.0, less), share * pi))
        else:
            states.append((*_shifted(*cells, pi, less), share))
    arr = np.asarray(states, dtype=float)
    return Pool(arr[:, 0].copy(), arr[:, 1].copy(), arr[:, 2].copy(), capped=effect > room)


def _moved3(
    p10: float, p01: float, p11: float, pi: float, less: bool
) -> tuple[float, float, float]:
    """``(p10, p01, p11)`` once a share ``pi`` of the arm's held (``less``: flipped) seeds move."""
    if less:
        return (1 - pi) * p10, p01 + pi * p11, (1 - pi) * p11
    return p10 + pi * (1.0 - p10 - p01 - p11), (1 - pi) * p01, p11 + pi * p01


def question_states(
    q: Question, effect: float, alternative: Alternative
) -> tuple[list[tuple[float, float, float, float]], bool]:
    """One fixed question under a declared effect, for the per-question plans (more seeds on
    the pilot's own questions): its states ``(p10, p01, p11, weight)`` and whether the effect
    exceeded what its held (``less``: flipped) seeds can take.

    The pilot's own difference is removed, then the effect added the way the question's
    structure adds it (as :func:`effect_pool` does over an eval set, issue 43): a question whose
    seeds repeat keeps repeating — its sides swapped with probability 1/2, then it moves whole
    with probability ``pi``; one whose seeds varied takes both sides at its mean discordance
    ``(p10 + p01) / 2`` (the per-seed null of its own paired test), then each of its seeds
    moves with probability ``pi``. ``pi`` makes the question's own difference the effect.
    """
    less = alternative == "less"
    if q.repeats:
        sides = [_cells(q, False), _cells(q, True)]
        room = float(np.mean([_capacity(*c, less) for c in sides]))
        pi = min(1.0, effect / room) if room > 0 else 0.0
        out: list[tuple[float, float, float, float]] = []
        for side in sides:
            out.append((*side, 0.5 * (1 - pi)))
            out.append((*_moved3(*side, 1.0, less), 0.5 * pi))
        return [s for s in out if s[3] > 0], effect > room
    m = (q.p10 + q.p01) / 2
    room = _capacity(m, m, q.p11, less)
    pi = min(1.0, effect / room) if room > 0 else 0.0
    return [(*_moved3(m, m, q.p11, pi, less), 1.0)], effect > room


def _cells(q: Question, mirrored: bool) -> tuple[float, float, float]:
    return (q.p01, q.p10, q.p11) if mirrored else (q.p10, q.p01, q.p11)
