"""Power of a sequential sweep's test for ``counterfact plan``: the cap worth buying.

A sequential arm (rule 19) is looked at after every wave with the engine's own
:func:`~counterfact.verdicts.stats.sequential.look`: it stops as ``significant`` once its e-process
reaches the sweep's threshold, as ``futile`` once that is out of reach or (with
``sequential.min_effect``) the minimal effect is ruled out, or at ``max_samples``. Its power at a
cap is the chance that it stops as significant by then, which no closed form gives; it is
simulated here: ``draws`` seed sequences of one scenario's pair cells (``p10``, ``p01``, the rest
concordant), each run through the looks at the sweep's wave boundaries up to the cap, with the
standard error of the proportion stated. The same draws serve every cap (common random numbers:
a longer cap extends the same sequences), so the search over caps compares like with like. The
mean seeds an arm used before it stopped is reported beside it: a sequential sweep usually spends
far less than its cap.

The search needs one pass, not one per cap (:func:`cap_for`). For caps on the wave grid
(``samples``, ``samples + wave``, ...), whether an arm is significant by cap ``c`` depends on ``c``
only through which looks it has: an arm stopped as ``unreachable`` could not have reached the
threshold by ``c`` anyway, and the ``min_effect`` stop does not depend on the cap. So the arms are
run once with the search's largest cap (``unreachable`` then fires only where no cap searched
could help), each arm's first significant look is recorded, and the power at every grid cap is
the share of arms significant by it — exactly non-decreasing in the cap.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np

from counterfact.verdicts.planning.power import Cells, Mixed, state_rows
from counterfact.verdicts.stats.sequential import look
from counterfact.verdicts.stats.settings import Waves, boundaries

DRAWS = 2_000
"""Simulated seed sequences per power figure (standard error at most 0.011)."""

CAP = 20_000
"""The largest ``max_samples`` a sequential plan searches."""


@dataclass(frozen=True)
class SequentialPower:
    """One scenario's sequential test at one cap."""

    power: float
    """Share of simulated arms that stopped as significant by the cap."""
    se: float
    """Its standard error."""
    mean_seeds: float
    """Mean seeds an arm had when it stopped (the cap for those that never did)."""


@dataclass(frozen=True)
class CapFound:
    """The least grid cap at which the sequential test reaches the power asked for."""

    cap: int
    power: float
    se: float


def _se(power: float, draws: int) -> float:
    return math.sqrt(max(power * (1 - power), 1e-12) / draws)


def _looks(
    cells: Cells | Mixed, rule: Waves, excluded: int, seed: int, draws: int
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Simulated arms run through the engine's looks up to ``rule.max_samples``: per look, its
    seeds and the arms that stopped there (all, and those significant). Each look decides once
    per distinct count among the arms still open. A :class:`Mixed` scenario draws each arm's
    state once (a copies question moves whole), then its seeds from that state.
    """
    rng = np.random.default_rng(seed)
    groups = [
        ([c.p10, c.p01, max(0.0, 1.0 - c.p10 - c.p01)], rows)
        for c, rows in state_rows(cells, rng, draws)
    ]
    n10 = np.zeros(draws, dtype=np.int64)
    n01 = np.zeros(draws, dtype=np.int64)
    open_ = np.ones(draws, dtype=bool)
    pairs_before = 0
    cap = rule.max_samples
    for seeds in boundaries(min(rule.samples, cap), rule.wave, cap):
        pairs = max(seeds - excluded, 0)
        for probs, rows in groups:
            size = draws if isinstance(rows, slice) else rows.size
            step = rng.multinomial(pairs - pairs_before, probs, size=size)
            n10[rows] += step[:, 0]
            n01[rows] += step[:, 1]
        pairs_before = pairs
        idx = np.flatnonzero(open_)
        counts, where = np.unique(np.stack([n10[idx], n01[idx]]), axis=1, return_inverse=True)
        why = [
            look(int(a), int(b), seeds=seeds, pairs=pairs, rule=rule).stopped_for
            for a, b in counts.T
        ]
        stop = idx[np.array([w is not None for w in why])[where.ravel()]]
        sig = idx[np.array([w == "significant" for w in why])[where.ravel()]]
        open_[stop] = False
        yield seeds, stop, sig
        if not open_.any():
            return


def sequential_power(
    cap: int, cells: Cells | Mixed, rule: Waves, excluded: int, seed: int = 0, draws: int = DRAWS
) -> SequentialPower:
    """Simulated power of the sweep's sequential test at ``max_samples = cap``, and the mean
    seeds an arm uses there.

    Args:
        cap: the ``max_samples`` planned.
        cells: the scenario's pair-cell probabilities.
        rule: the sweep's sequential settings (first wave, wave, threshold, direction, minimal
            effect); its ``max_samples`` is replaced by ``cap``.
        excluded: seeds that are no pair (seed 0 when it is the reference).
        seed: the generator's seed (fixed: the same draws for every cap).
        draws: simulated arms.
    """
    used = np.full(draws, cap, dtype=np.int64)
    hits = 0
    for seeds, stop, sig in _looks(cells, replace(rule, max_samples=cap), excluded, seed, draws):
        used[stop] = seeds
        hits += len(sig)
    return SequentialPower(hits / draws, _se(hits / draws, draws), float(used.mean()))


def cap_for(
    target: float,
    cells: Cells | Mixed,
    rule: Waves,
    excluded: int,
    seed: int = 0,
    draws: int = DRAWS,
    cap: int = CAP,
) -> CapFound | None:
    """The least ``max_samples`` on the wave grid at which the share of simulated arms stopped as
    significant reaches ``target`` (one pass with ``cap`` as the largest, see the module
    docstring); None when ``cap`` does not.
    """
    hits = 0
    for seeds, _, sig in _looks(cells, replace(rule, max_samples=cap), excluded, seed, draws):
        hits += len(sig)
        if hits / draws >= target:
            return CapFound(seeds, hits / draws, _se(hits / draws, draws))
    return None
