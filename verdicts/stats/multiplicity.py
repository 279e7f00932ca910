"""Multiplicity control over a declared family of tests (rule 15).

- ``holm``: Holm (1979) step-down, controls the family-wise error rate. Written here: sort
  ascending, ``p_(i) * (m - i + 1)``, running maximum, capped at 1 (Holm, S. (1979). A simple
  sequentially rejective multiple test procedure. Scand. J. Statist. 6: 65-70).
- ``bh`` / ``by``: Benjamini-Hochberg and Benjamini-Yekutieli false discovery rate, from
  ``scipy.stats.false_discovery_control``.
- ``none``: the raw p-values.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.stats import false_discovery_control

from counterfact.records.vocabulary import Adjustment

ADJUSTMENTS: tuple[Adjustment, ...] = ("holm", "bh", "by", "none")


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def adjust(p_values: Sequence[float], method: Adjustment) -> list[float]:
    """Adjusted p-values of one family, in the input order."""
    if not p_values:
        return []
    if method == "holm":
        return holm(p_values)
    if method in ("bh", "by"):
        return [float(x) for x in false_discovery_control(np.asarray(p_values), method=method)]
    return [float(x) for x in p_values]


def best_factor(method: Adjustment, size: int) -> float:
    """What the adjustment multiplies the smallest p-value of a family of ``size`` by, at best
    (every test at its floor): Holm ``size``; BH 1; BY the harmonic sum; none 1.
    """
    if method == "holm":
        return float(size)
    if method == "by":
        return sum(1 / i for i in range(1, size + 1))
    return 1.0
