"""Samples per arm for a power asked for, from a pilot's verdict rows (``counterfact plan``).

Per challenger, each scenario's cell rates come from its test record (``n10 / pairs``,
``n01 / pairs``), or, with a declared effect ``d``, the baseline-side rate of the pilot and the
other side raised by ``d`` (``greater``/``two-sided``: ``p10 = p01 + d``; ``less``: ``p01 = p10 +
d``). Each scenario's own test is planned exactly at its family's per-test level; with several
scenarios the pooled (stratified) test is simulated at the level over the challengers, and it is
the figure recommended — the one result that survives when many per-scenario tests are adjusted.

Under ``pairing: none`` the sweep judges each scenario with Fisher's unpaired test and has no
pooled test, so each scenario is planned exactly with :func:`unpaired_power` on its arm's and
baseline's flip rates (``--effect d``: the arm's rate is the baseline's plus ``d``, minus under
``less``), and the figure recommended is the most any scenario within reach needs.

A sequential pilot is planned for its own test too (:mod:`counterfact.verdicts.power_sequential`):
per scenario, the ``max_samples`` at which the e-process, looked at after every wave with the
sweep's threshold and futility rules, stops as significant with the power asked for (simulated),
and the mean seeds an arm uses there. The figure is again the most any scenario within reach
needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from counterfact.records.plan import ScenarioPlan
from counterfact.records.verdicts import VerdictRecord
from counterfact.records.vocabulary import Adjustment, Alternative, Pairing
from counterfact.verdicts.power import (
    Cells,
    paired_power,
    per_test_level,
    pooled_power,
    samples_for,
)
from counterfact.verdicts.power_sequential import CAP as SEQUENTIAL_CAP
from counterfact.verdicts.power_sequential import DRAWS as SEQUENTIAL_DRAWS
from counterfact.verdicts.power_sequential import sequential_power
from counterfact.verdicts.power_unpaired import unpaired_power
from counterfact.verdicts.settings import Waves

DRAWS = 10_000
"""Simulated sweeps per pooled power figure (standard error at most 0.005)."""


@dataclass(frozen=True)
class Design:
    """What the sweep's tests are: level, adjustment, direction, the families' sizes."""

    alpha: float
    adjust: Adjustment
    alternative: Alternative
    family_size: int
    """Tests in one per-scenario family."""
    challengers: int
    """Tests in the pooled family (one per challenger)."""
    pairing: Pairing = "seed"
    """``none``: the sweep's test is Fisher's unpaired test, planned per scenario."""
    waves: Waves | None = None
    """A sequential pilot's settings: its e-process is planned instead (per scenario)."""


@dataclass(frozen=True)
class Planned:
    """One challenger's plan, before runs, spend and wall time are added."""

    samples: int | None
    power: float | None
    method: str
    se: float | None
    scenarios: list[ScenarioPlan]
    note: str | None


def cells_of(row: VerdictRecord, effect: float | None, alternative: Alternative) -> Cells | None:
    """The pair-cell rates a scenario's row implies (None: it has no test to plan)."""
    t = row.test
    if t is None or t.pairs == 0:
        return None
    p10, p01 = t.n10 / t.pairs, t.n01 / t.pairs
    if effect is not None:
        if alternative == "less":
            p01 = min(p10 + effect, 1.0 - p10)
        else:
            p10 = min(p01 + effect, 1.0 - p01)
    return Cells(p10, p01)


def _scenario(row: VerdictRecord, cells: Cells, design: Design, target: float) -> ScenarioPlan:
    level = per_test_level(design.alpha, design.adjust, design.family_size)
    excluded = row.test.pairs_excluded if row.test is not None else 0
    found = samples_for(
        target,
        lambda n: paired_power(n, cells.p10, cells.p01, level, design.alternative),
    )
    return ScenarioPlan(
        scenario=row.scenario,
        p10=cells.p10,
        p01=cells.p01,
        samples=None if found is None else found[0] + excluded,
        power=None if found is None else found[1],
    )


def rates_of(
    row: VerdictRecord, effect: float | None, alternative: Alternative
) -> tuple[float, float] | None:
    """The arm's and the baseline's flip rates a scenario's row implies (unpaired plans)."""
    t = row.test
    if t is None or t.pairs == 0:
        return None
    both = t.n11 or 0
    arm, base = (t.n10 + both) / t.pairs, (t.n01 + both) / t.pairs
    if effect is not None:
        arm = max(base - effect, 0.0) if alternative == "less" else min(base + effect, 1.0)
    return arm, base


def _unpaired_scenario(
    row: VerdictRecord, rates: tuple[float, float], design: Design, target: float
) -> ScenarioPlan:
    level = per_test_level(design.alpha, design.adjust, design.family_size)
    excluded = _excluded(row)
    arm, base = rates
    found = samples_for(target, lambda n: unpaired_power(n, arm, base, level, design.alternative))
    t = row.test
    return ScenarioPlan(
        scenario=row.scenario,
        p10=t.n10 / t.pairs if t is not None else 0.0,
        p01=t.n01 / t.pairs if t is not None else 0.0,
        p_arm=arm,
        p_base=base,
        samples=None if found is None else found[0] + excluded,
        power=None if found is None else found[1],
    )


def plan_unpaired(
    rows: Sequence[VerdictRecord], design: Design, target: float, effect: float | None
) -> Planned:
    """``pairing: none``: each scenario's Fisher test planned exactly; the figure is the most any
    scenario within reach needs, with the least power any of those has there.
    """
    tested = [(r, x) for r in rows if (x := rates_of(r, effect, design.alternative)) is not None]
    if not tested:
        return Planned(None, None, "none", None, [], "no scenario has a test to plan from")
    scenarios = [_unpaired_scenario(r, x, design, target) for r, x in tested]
    method = "Fisher exact per scenario, exact enumeration"
    reach = [(r, x) for (r, x), s in zip(tested, scenarios, strict=True) if s.samples is not None]
    left = len(rows) - len(reach)
    note = None
    if reach and left:
        note = (
            f"the figure is for the {len(reach)} scenario(s) within reach; {left} other(s) are not"
        )
    if not reach:
        return Planned(None, None, method, None, scenarios, note)
    n = max(s.samples for s in scenarios if s.samples is not None)
    level = per_test_level(design.alpha, design.adjust, design.family_size)
    power = min(
        unpaired_power(n - _excluded(r), arm, base, level, design.alternative)
        for r, (arm, base) in reach
    )
    return Planned(n, power, method, None, scenarios, note)


def _excluded(row: VerdictRecord) -> int:
    return row.test.pairs_excluded if row.test is not None else 0


def _sequential_scenario(
    row: VerdictRecord, cells: Cells, waves: Waves, target: float, seed: int
) -> tuple[ScenarioPlan, float | None]:
    excluded = _excluded(row)
    found = samples_for(
        target,
        lambda n: sequential_power(n, cells, waves, excluded, seed).power,
        start=waves.samples,
        cap=SEQUENTIAL_CAP,
    )
    plan = ScenarioPlan(
        scenario=row.scenario,
        p10=cells.p10,
        p01=cells.p01,
        samples=None if found is None else found[0],
        power=None if found is None else found[1],
    )
    return plan, None if found is None else found[1]


def plan_sequential(
    rows: Sequence[VerdictRecord], design: Design, target: float, effect: float | None, seed: int
) -> Planned:
    """A sequential pilot: per scenario the cap at which its e-process reaches ``target`` power;
    the figure is the most any scenario within reach needs, with the least power any of those has
    there and the mean seeds each uses.
    """
    waves = design.waves
    tested = [(r, c) for r in rows if (c := cells_of(r, effect, design.alternative)) is not None]
    if waves is None or not tested:
        return Planned(None, None, "none", None, [], "no scenario has a test to plan from")
    firsts = [_sequential_scenario(r, c, waves, target, seed)[0] for r, c in tested]
    method = f"sequential e-process per scenario, simulated ({SEQUENTIAL_DRAWS:,} draws)"
    caps = [s.samples for s in firsts if s.samples is not None]
    left = len(rows) - len(caps)
    note = f"the figure is for the {len(caps)} scenario(s) within reach; {left} other(s) are not"
    if not caps:
        return Planned(None, None, method, None, firsts, note if tested else None)
    cap = max(caps)
    at_cap = [sequential_power(cap, c, waves, _excluded(r), seed) for r, c in tested]
    reach = [(s, a) for s, a in zip(firsts, at_cap, strict=True) if s.samples is not None]
    worst = min(reach, key=lambda sa: sa[1].power)[1]
    scenarios = [
        s.model_copy(update={"expected_samples": a.mean_seeds})
        for s, a in zip(firsts, at_cap, strict=True)
    ]
    return Planned(cap, worst.power, method, worst.se, scenarios, note if left else None)


def plan_challenger(
    rows: Sequence[VerdictRecord],
    design: Design,
    target: float,
    effect: float | None,
    seed: int = 0,
) -> Planned:
    """The samples one challenger's rows (one per scenario) need for ``target`` power."""
    if design.waves is not None:
        return plan_sequential(rows, design, target, effect, seed)
    if design.pairing == "none":
        return plan_unpaired(rows, design, target, effect)
    tested = [(r, c) for r in rows if (c := cells_of(r, effect, design.alternative)) is not None]
    scenarios = [_scenario(r, c, design, target) for r, c in tested]
    skipped = len(rows) - len(tested)
    note = f"{skipped} scenario(s) without a test were left out" if skipped else None
    if not tested:
        return Planned(None, None, "none", None, [], "no scenario has a test to plan from")
    if len(tested) == 1:
        only = scenarios[0]
        return Planned(only.samples, only.power, "exact enumeration", None, scenarios, note)
    level = per_test_level(design.alpha, design.adjust, design.challengers)
    cells = [c for _, c in tested]

    def pooled(n: int) -> float:  # common random numbers: the same draws at every n
        rng = np.random.default_rng(seed)
        return pooled_power(n, cells, level, design.alternative, rng, DRAWS)[0]

    found = samples_for(target, pooled)
    method = f"pooled test over {len(tested)} scenarios, simulated ({DRAWS:,} draws)"
    if found is None:
        return Planned(None, None, method, None, scenarios, note)
    n, _ = found
    power, se = pooled_power(
        n, cells, level, design.alternative, np.random.default_rng(seed), DRAWS
    )
    # samples, not pairs: seed 0 is no pair when it is the reference (rule 13)
    excluded = max(r.test.pairs_excluded for r, _ in tested if r.test is not None)
    return Planned(n + excluded, power, method, se, scenarios, note)
