"""Cost verdicts (rule 11): did removing an item save cost, beyond benign variance?

For each ablation arm of a scenario, against the baseline:

- ``saved[k]`` = baseline median of cost key ``k`` − the arm's median (null when either side did
  not report ``k``; negative when removal made the run costlier);
- ``consistent``: the arm's *max* of the judged key (``cost_key``, default ``loops``) is <= the
  baseline median — every rerun, not just the typical one, used no more;
- the **placebo band**: the judged key's ``saved`` of the *other* ablation arms whose verdict is
  not ``confirmed`` (leave-one-out; arms that did not report the key are not in it);
- ``stable`` = the band is non-empty and the reading is consistent;
- ``cost_cause`` = stable, ``saved >= 1`` and ``saved > max(band)``.

Class (the 2×2): ``both`` (confirmed and cost cause), ``content-bug`` (confirmed only),
``cost-cause`` (cost cause only), ``no-detected-effect`` — never "innocent": an item can matter
in ways neither axis sees. The placebo population may itself hold real cost causes, so the
band's max is conservative: it under-detects rather than over-claims.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from counterfact.probes.stats import CostStats
from counterfact.records.vocabulary import CostClass

MIN_SAVED = 1.0
"""A cost cause must save at least this much of the judged key."""


@dataclass(frozen=True)
class CostItem:
    """One ablation arm's evidence for the cost reading."""

    arm: str
    confirmed: bool
    cost: Mapping[str, CostStats] | None


@dataclass(frozen=True)
class CostReading:
    """Rule 11's reading of one ablation arm."""

    key: str
    saved: dict[str, float | None]
    consistent: bool
    stable: bool
    cost_cause: bool
    placebo: tuple[float, ...]
    """The leave-one-out placebo band (saved values of non-confirmed peers)."""


def _saved(
    base: Mapping[str, CostStats] | None, item: Mapping[str, CostStats] | None
) -> dict[str, float | None]:
    keys = sorted(set(base or {}) | set(item or {}))
    return {
        k: (base[k].median - item[k].median) if base and item and k in base and k in item else None
        for k in keys
    }


def cost_readings(
    items: Sequence[CostItem], baseline: Mapping[str, CostStats] | None, key: str
) -> dict[str, CostReading | None]:
    """A reading per item; None for an item that reported no cost at all."""
    saved = {it.arm: _saved(baseline, it.cost) for it in items}
    readings: dict[str, CostReading | None] = {}
    for it in items:
        if it.cost is None:
            readings[it.arm] = None
            continue
        mine = saved[it.arm].get(key)
        band = tuple(
            value
            for other in items
            if other.arm != it.arm and not other.confirmed and other.cost is not None
            for value in [saved[other.arm].get(key)]
            if value is not None
        )
        consistent = bool(
            baseline
            and key in baseline
            and key in it.cost
            and it.cost[key].max <= baseline[key].median
        )
        stable = bool(band) and consistent
        cause = stable and mine is not None and mine >= MIN_SAVED and mine > max(band)
        readings[it.arm] = CostReading(key, saved[it.arm], consistent, stable, cause, band)
    return readings


def cost_class(confirmed: bool, reading: CostReading | None) -> CostClass:
    """The 2×2 class of an ablation arm."""
    cause = reading is not None and reading.cost_cause
    if confirmed and cause:
        return "both"
    if confirmed:
        return "content-bug"
    if cause:
        return "cost-cause"
    return "no-detected-effect"
