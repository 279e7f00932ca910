"""A test over questions, valid however a question's seeds depend on each other.

Per question ``q`` the arm's flip count minus the baseline's over its scored pairs is
``a_q = n10_q - n01_q`` (``n_q`` pairs). The effect is the pair-weighted flip-rate difference
``A / N`` with ``A = sum a_q`` and ``N = sum n_q`` (the pooled effect's ratio estimator).

**Test.** Under the null that the arm changes nothing, swapping the arm's and the baseline's
labels on *all* of one question's runs at once leaves the data's distribution unchanged, so
``a_q`` and ``-a_q`` are equally likely, independently across questions, whatever the seeds of
one question share (identical copies under a fixed API seed, or independent draws). The
sign-flip (cluster randomisation) distribution of ``T = sum s_q a_q``, ``s_q = +-1``, is exact:
questions with the same ``|a_q| = v`` contribute ``v * (2 B - m_v)`` with ``B ~ Binomial(m_v,
1/2)``, and the few such terms (one per distinct ``v``, at most the seeds per question) are
convolved. Fisher (1935), The Design of Experiments, section 21; Good (2005), Permutation,
Parametric and Bootstrap Tests of Hypotheses, 3.1. With identical epochs it is the sign test
over questions; with one seed per question it is McNemar's exact test.

**Interval.** The sign-flip score interval: the effects ``d`` whose residuals
``e_q = a_q - d n_q`` give ``|sum e_q| <= z sqrt(sum e_q^2)`` (``sum e_q^2`` is the sign-flip
variance of ``sum e_q``), a quadratic in ``d``. Its critical value ``z`` is the exact test's, not
the normal quantile: at ``d = 0`` the inequality reads ``|T| <= z sqrt(sum a_q^2)``, and ``z`` is
set half-way between the largest attainable ``|T|`` the exact test keeps and the smallest it
rejects (:func:`critical_z`; a continuity correction matched to the exact null). So the interval
excludes 0 exactly when the exact test at the same level rejects, by construction; away from 0
it is the normal approximation of the test inverted. For a one-sided test at ``alpha`` the
interval is two-sided at ``1 - 2 alpha`` (its bound on the tested side is the one-sided
``1 - alpha`` bound). The arm-level verdict builds it at the level adjusted over the challengers
(:func:`counterfact.verdicts.armlevel.adjusted_alpha`).

**Effective sample.** ``N * (D - A^2 / N) / sum (a_q - d n_q)^2`` pairs with ``d = A / N``
(``D`` discordant pairs), kept within ``[Q, N]``: the pairs that independent seeds would need
for the spread the questions' moves show around the effect. It is about ``N`` when seeds are
independent and ``Q``, the number of questions, when every epoch is a copy (exactly, for equal
seeds per question; and ``Q`` outright when no question's outcome varied across its seeds).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.signal import fftconvolve
from scipy.stats import binom, norm

from counterfact.records.vocabulary import Alternative
from counterfact.verdicts.stats.significance import TOLERANCE, effect_of_counts
from counterfact.verdicts.stats.tails import directed_p

DIRECT_LIMIT = 4_000_000
"""Above this many multiply-adds a convolution goes through the FFT (same result to ~1e-14)."""
FFT_NOISE = 1e-11
"""FFT tails below this are rounding noise; the normal tail stands in for them there."""


@dataclass(frozen=True)
class QuestionCounts:
    """One question's paired counts for a challenger."""

    question: str
    n10: int
    n01: int
    n11: int
    pairs: int

    @property
    def moved(self) -> int:
        """``n10 - n01``: the arm's extra flips on this question."""
        return self.n10 - self.n01

    @property
    def constant(self) -> bool:
        """Every seed of this question gave the same outcome on each side."""
        arm, base = self.n10 + self.n11, self.n01 + self.n11
        return arm in (0, self.pairs) and base in (0, self.pairs)


@dataclass(frozen=True)
class ClusteredTest:
    """The sign-flip test over questions and its interval."""

    questions: int
    pairs: int
    statistic: int
    """``sum a_q``: the arm's extra flips over every question."""
    diff: float
    p_value: float
    min_attainable_p: float
    low: float
    high: float
    level: float
    effective_pairs: float
    seeds_vary: bool
    """Some question's outcomes varied across its seeds (False: epochs are copies)."""
    up: int
    """Questions where the arm flipped more often than the baseline."""
    down: int
    """Questions where it flipped less often."""
    exact: bool
    """The p-value is exact (False: the normal tail stood in below FFT noise)."""
    seeds_are_sample: bool = False
    """A one-question sweep: the row's own paired test over its seeds stands in."""


def _null_pmf(
    magnitudes: Sequence[int],
) -> tuple[np.ndarray[tuple[int], np.dtype[np.float64]], int, bool]:
    """The sign-flip distribution of ``sum s_q v_q`` over the nonzero ``v_q``: its pmf on
    ``-S..S`` (index ``t + S``), ``S``, and whether an FFT was used.
    """
    values, counts = np.unique(np.asarray(magnitudes, dtype=np.int64), return_counts=True)
    pmf = np.ones(1)
    span = 0
    fft = False
    for v, m in zip(values.tolist(), counts.tolist(), strict=True):
        part = np.zeros(2 * v * m + 1)
        part[:: 2 * v] = binom.pmf(np.arange(m + 1), m, 0.5)
        if pmf.size * part.size > DIRECT_LIMIT:
            pmf = np.clip(fftconvolve(pmf, part), 0.0, None)
            fft = True
        else:
            pmf = np.convolve(pmf, part)
        span += v * m
    return pmf, span, fft


def sign_flip_p(moved: Sequence[int], alternative: Alternative) -> tuple[float, bool]:
    """The exact sign-flip p of ``sum moved`` in the direction asked, and whether it is exact."""
    nonzero = [abs(a) for a in moved if a != 0]
    if not nonzero:
        return 1.0, True
    t = sum(moved)
    pmf, span, fft = _null_pmf(nonzero)
    upper = float(pmf[t + span :].sum())
    lower = float(pmf[: t + span + 1].sum())
    p = directed_p(upper, lower, alternative)
    if not fft or p >= FFT_NOISE:
        return min(1.0, p), True
    sd = math.sqrt(sum(a * a for a in nonzero))
    z = (abs(t) - 1) / sd
    tail = float(norm.sf(z))
    return (tail if alternative != "two-sided" else 2 * tail), False


def critical_z(moved: Sequence[int], alternative: Alternative, alpha: float) -> float | None:
    """The exact test's critical value at 0 as a score-test ``z``: ``cut / sqrt(sum a_q^2)``,
    with ``cut`` half-way between the largest attainable ``|T|`` the test at ``alpha`` keeps and
    the smallest it rejects (one tail at ``alpha``, two-sided at ``alpha / 2``; the null is
    symmetric). None when no question moved (no null spread to scale by).
    """
    nonzero = [abs(a) for a in moved if a != 0]
    if not nonzero:
        return None
    pmf, span, _ = _null_pmf(nonzero)
    tail = alpha if alternative != "two-sided" else alpha / 2
    upper = np.cumsum(pmf[::-1])[::-1]  # upper[i] = P(T >= i - span)
    rejects = np.flatnonzero((upper <= tail * (1 + TOLERANCE)) & (pmf > 0))
    if rejects.size == 0:
        cut = span + 1.0  # no outcome rejects: no |T| is beyond the cut
    else:
        crit = int(rejects[0])
        kept = np.flatnonzero(pmf[:crit] > 0)
        cut = (crit + (int(kept[-1]) if kept.size else crit - 1)) / 2 - span
    return cut / math.sqrt(sum(a * a for a in nonzero))


def _roots(qa: float, qb: float, qc: float, estimate: float) -> tuple[float, float]:
    """Where ``qa d^2 + qb d + qc <= 0`` around ``estimate`` (which satisfies it), clipped to
    [-1, 1]: between the roots when ``qa > 0``; the ray beyond the root on the estimate's side
    when ``qa < 0`` (too few questions for a bounded interval), or the whole range when 0
    (``qc <= 0``) is on the other ray or there are no roots.
    """
    disc = qb * qb - 4 * qa * qc
    if qa == 0 or (qa < 0 and disc <= 0):
        return -1.0, 1.0
    root = math.sqrt(max(0.0, disc))
    one, two = sorted(((-qb - root) / (2 * qa), (-qb + root) / (2 * qa)))
    if qa > 0:
        return max(-1.0, one), min(1.0, two)
    low, high = (max(-1.0, two), 1.0) if estimate >= two else (-1.0, min(1.0, one))
    if qc <= 0 and not low <= 0 <= high:
        return -1.0, 1.0  # 0 is accepted on the other ray: the hull of both
    return low, high


def score_interval(
    counts: Sequence[QuestionCounts],
    alternative: Alternative,
    alpha: float,
    z: float | None = None,
) -> tuple[float, float, float]:
    """The sign-flip score interval of the pair-weighted difference: ``(low, high, level)``,
    at the normal quantile of ``level`` unless a critical ``z`` is given.
    """
    level = 1 - alpha if alternative == "two-sided" else 1 - 2 * alpha
    z2 = (float(norm.ppf(0.5 + level / 2)) if z is None else z) ** 2
    a = np.array([c.moved for c in counts], dtype=float)
    n = np.array([c.pairs for c in counts], dtype=float)
    big_a, big_n = float(a.sum()), float(n.sum())
    low, high = _roots(
        big_n**2 - z2 * float((n * n).sum()),
        -2 * (big_a * big_n - z2 * float((a * n).sum())),
        big_a**2 - z2 * float((a * a).sum()),
        big_a / big_n,
    )
    return low, high, level


def _widen(low: float, high: float, other: tuple[float, float]) -> tuple[float, float]:
    """The hull of two intervals, except that no bound is carried across 0 (whether 0 is in
    is the exact test's call, made by the score interval's critical value).
    """
    new_low, new_high = min(low, other[0]), max(high, other[1])
    return (low if low > 0 >= new_low else new_low), (high if high < 0 <= new_high else new_high)


def hulled_interval(
    counts: Sequence[QuestionCounts], alternative: Alternative, alpha: float, seeds_vary: bool
) -> tuple[float, float, float]:
    """The score interval at the exact test's critical value (:func:`critical_z`), so that it
    leaves out 0 exactly when the exact test at ``alpha`` rejects, widened where it would claim
    more than the counts can: to Newcombe's interval on the summed pairs (when the questions'
    moves agree more closely than independent pairs could, the sign-flip variance gives an
    interval of no width), and, when no question's outcome varied across its seeds, to
    Newcombe's interval over the questions (each one pair: then every question's difference is
    -1, 0 or 1, and the questions are the sample). No widening carries a bound across 0.
    """
    z = critical_z([c.moved for c in counts], alternative, alpha)
    low, high, level = score_interval(counts, alternative, alpha, z)
    sums = (sum(c.n10 for c in counts), sum(c.n01 for c in counts), sum(c.n11 for c in counts))
    hulls = [effect_of_counts(*sums, sum(c.pairs for c in counts), level)]
    if not seeds_vary:
        up = sum(c.moved > 0 for c in counts)
        down = sum(c.moved < 0 for c in counts)
        both = sum(c.n11 == c.pairs > 0 for c in counts)
        hulls.append(effect_of_counts(up, down, both, len(counts), level))
    for e in hulls:
        if e is not None:
            low, high = _widen(low, high, (e.low, e.high))
    return low, high, level


def _effective_pairs(counts: Sequence[QuestionCounts], pairs: int, seeds_vary: bool) -> float:
    """``N * V_pairs / V_questions``, kept within ``[Q, N]``: the pairs independent draws would
    need for the spread the questions show. ``V_questions = sum (a_q - d n_q)^2`` is the spread
    of the questions' moves around the effect ``d = A / N``; ``V_pairs = D - A^2 / N`` is what
    it would be if every pair were an independent draw at the set's rates (``D`` discordant
    pairs). Independent seeds keep about ``N``; copies leave the number of questions ``Q``
    (seeds add a factor ``n`` to both sides of a copied question's move, and only ``n`` pairs'
    worth of information). When no question's outcome varied across its seeds the questions are
    the sample and it is ``Q`` outright, also where the ratio is 0/0 (every question moved the
    same way by all its pairs); a zero spread with seeds that vary gives ``N``.
    """
    questions = float(min(len(counts), pairs))
    if not seeds_vary:
        return questions
    moved = sum(c.moved for c in counts)
    d = moved / pairs
    spread = sum((c.moved - d * c.pairs) ** 2 for c in counts)
    independent = sum(c.n10 + c.n01 for c in counts) - moved * moved / pairs
    if spread <= 0 or independent <= 0:
        return float(pairs)
    return min(float(pairs), max(questions, pairs * independent / spread))


def floor_over(questions: int, alternative: Alternative) -> float:
    """The smallest p any outcome over ``questions`` questions can give (all moved one way)."""
    if questions <= 0:
        return 1.0
    one = 0.5**questions
    return min(1.0, 2 * one) if alternative == "two-sided" else one


def clustered_test(
    counts: Sequence[QuestionCounts], alternative: Alternative, alpha: float
) -> ClusteredTest | None:
    """The sign-flip test over the questions with a scored pair (None without one)."""
    counts = [c for c in counts if c.pairs > 0]
    if not counts:
        return None
    moved = [c.moved for c in counts]
    pairs = sum(c.pairs for c in counts)
    p, exact = sign_flip_p(moved, alternative)
    seeds_vary = any(not c.constant for c in counts if c.pairs > 1)
    low, high, level = hulled_interval(counts, alternative, alpha, seeds_vary)
    effective = _effective_pairs(counts, pairs, seeds_vary)
    return ClusteredTest(
        questions=len(counts),
        pairs=pairs,
        statistic=sum(moved),
        diff=sum(moved) / pairs,
        p_value=p,
        min_attainable_p=floor_over(len(counts), alternative),
        low=low,
        high=high,
        level=level,
        effective_pairs=effective,
        seeds_vary=seeds_vary,
        up=sum(a > 0 for a in moved),
        down=sum(a < 0 for a in moved),
        exact=exact,
    )
