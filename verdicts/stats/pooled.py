"""One challenger's effect across scenarios (rule 18's companion): a pooled flip-rate
difference with an interval that respects clustering by scenario, and a heterogeneity flag.

Per scenario ``s`` the paired difference is ``d_s = (n10_s - n01_s) / n_s`` over its ``n_s``
scored seed pairs. The pooled effect is the ratio estimator ``r = sum(n10 - n01) / sum(n)``
(each pair counts once, as in the stratified test).

**Interval.** Seeds within a scenario share its question, so pairs are not independent across
scenarios: a scenario whose effect differs from the rest moves all of its pairs at once. The
cluster-robust (CR1) variance of the ratio estimator,

    V = S / (S - 1) * sum_s (a_s - r * n_s) ** 2 / (sum_s n_s) ** 2,   a_s = n10_s - n01_s,

with a Student t quantile on ``S - 1`` degrees of freedom, accounts for it (Cameron and Miller
(2015), A practitioner's guide to cluster-robust inference, J. Human Resources 50(2)). When
the scenarios happen to agree exactly ``V`` is 0 though the pairs still vary, so the interval
reported is the hull of the CR1 interval and Newcombe's paired interval on the summed counts
(which treats pairs as independent): the wider of the two on each side. Its coverage is
measured in ``docs/statistics.md`` (``scripts/calibrate.py``).

**Heterogeneity.** Cochran's Q over the scenarios' differences, each weighted by the inverse of
``v_s = (n10_s + n01_s + 1) / ((n_s + 1) * n_s)``, against chi-square on ``S - 1`` degrees of
freedom; ``I^2 = max(0, (Q - (S - 1)) / Q)`` (Higgins and Thompson (2002), Statistics in
Medicine 21(11)). ``v_s`` bounds the variance of a paired difference by its second moment
(``var(D) <= E[D^2] = p10 + p01``, one pseudo-count added so a scenario without discordant pairs
does not weigh infinitely): the usual plug-in variances, correlated with the differences they
weight, made Q flag 8-13% of homogeneous sweeps at 0.05; this bound keeps it at 2-3% (measured
in ``docs/statistics.md``), at the price of power against small disagreements. The effects are
flagged heterogeneous when Q's p is below 0.05, and the scenarios named as standing out are
those whose distance from the *median* scenario's difference, in units of ``sqrt(v_s)``,
exceeds the Bonferroni normal quantile ``z_{1 - 0.05 / (2 S)}`` (the median, not the weighted
mean: one scenario with a large effect pulls the mean away from every other one).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from scipy.stats import chi2, norm
from scipy.stats import t as student_t

from counterfact.records.summary import PooledEffectRecord
from counterfact.records.verdicts import VerdictRecord
from counterfact.verdicts.stats.significance import effect_of_counts

HETEROGENEITY_ALPHA = 0.05
METHOD = "pooled paired difference; CR1 cluster-robust t over scenarios, hulled with Newcombe"


@dataclass(frozen=True)
class Stratum:
    """One scenario's paired counts for a challenger."""

    scenario: str
    n10: int
    n01: int
    n11: int
    pairs: int


@dataclass(frozen=True)
class PooledEffect:
    """The pooled flip-rate difference (arm minus baseline) and how the scenarios agree."""

    diff: float
    low: float
    high: float
    level: float
    method: str
    heterogeneity_p: float | None
    """Cochran's Q p-value (None with one scenario)."""
    i_squared: float | None
    heterogeneous: bool
    disagreeing: tuple[str, ...]
    """Scenarios whose own effect stands out from the median scenario's (Bonferroni over S)."""


def _newcombe(strata: Sequence[Stratum], level: float) -> tuple[float, float]:
    """Newcombe's paired interval on the summed counts (pairs treated as independent)."""
    effect = effect_of_counts(
        sum(s.n10 for s in strata),
        sum(s.n01 for s in strata),
        sum(s.n11 for s in strata),
        sum(s.pairs for s in strata),
        level,
    )
    return (effect.low, effect.high) if effect is not None else (-1.0, 1.0)


def _heterogeneity(strata: Sequence[Stratum]) -> tuple[float | None, float | None, tuple[str, ...]]:
    if len(strata) < 2:
        return None, None, ()
    d, w = [], []
    for s in strata:
        d.append((s.n10 - s.n01) / s.pairs)
        w.append((s.pairs + 1) * s.pairs / (s.n10 + s.n01 + 1))
    mean = sum(wi * di for wi, di in zip(w, d, strict=True)) / sum(w)
    q = sum(wi * (di - mean) ** 2 for wi, di in zip(w, d, strict=True))
    df = len(strata) - 1
    i2 = max(0.0, (q - df) / q) if q > 0 else 0.0
    z = float(norm.ppf(1 - HETEROGENEITY_ALPHA / (2 * len(strata))))
    typical = statistics.median(d)
    out = tuple(
        s.scenario
        for s, wi, di in zip(strata, w, d, strict=True)
        if abs(di - typical) * math.sqrt(wi) > z
    )
    return float(chi2.sf(q, df)), i2, out


def pooled_effect(strata: Sequence[Stratum], level: float = 0.95) -> PooledEffect | None:
    """The pooled effect of one challenger over its scenarios (None without a scored pair)."""
    strata = [s for s in strata if s.pairs > 0]
    total = sum(s.pairs for s in strata)
    if not strata or total == 0:
        return None
    r = sum(s.n10 - s.n01 for s in strata) / total
    low, high = _newcombe(strata, level)
    k = len(strata)
    if k >= 2:
        resid = sum((s.n10 - s.n01 - r * s.pairs) ** 2 for s in strata)
        se = math.sqrt(k / (k - 1) * resid) / total
        half = float(student_t.ppf(0.5 + level / 2, k - 1)) * se
        low, high = min(low, r - half), max(high, r + half)
    p, i2, disagreeing = _heterogeneity(strata)
    return PooledEffect(
        diff=r,
        low=max(-1.0, low),
        high=min(1.0, high),
        level=level,
        method=METHOD,
        heterogeneity_p=p,
        i_squared=i2,
        heterogeneous=p is not None and p < HETEROGENEITY_ALPHA,
        disagreeing=disagreeing,
    )


def pooled_effect_record(rows: Sequence[VerdictRecord]) -> PooledEffectRecord | None:
    """The pooled effect of one challenger's tested rows, as recorded (None when a test lacks
    ``n11``, in records written before it existed, or no pair was scored).
    """
    strata = []
    for row in rows:
        t = row.test
        if t is None or t.n11 is None:
            return None
        strata.append(Stratum(row.scenario, t.n10, t.n01, t.n11, t.pairs))
    found = pooled_effect(strata)
    if found is None:
        return None
    return PooledEffectRecord.model_validate(asdict(found))  # the record's fields, one for one
