"""``counterfact plan`` for a ``pairing: none`` sweep: Fisher's unpaired test per scenario.

The sweep judges each scenario with Fisher's exact test and has no pooled test, so each scenario
is planned exactly (:func:`~counterfact.verdicts.planning.power_unpaired.unpaired_power`) on its
arm's and baseline's flip rates, at its family's per-test level; the figure recommended is the most
any scenario within reach needs, with the least power any of them has there.

With ``--effect`` a scenario's rates are its per-question states
(:func:`counterfact.verdicts.planning.design.rates_of`): the test ignores the pairing, but a
copies question's runs still repeat on each side, so the effect moves it whole; its power is
the weighted sum of the states'.
"""

from __future__ import annotations

from collections.abc import Sequence

from counterfact.records.plan import ScenarioPlan
from counterfact.records.verdicts import VerdictRecord
from counterfact.verdicts.planning.design import (
    Design,
    Planned,
    excluded,
    left_out_note,
    nothing_to_plan,
    rates_of,
    towards,
)
from counterfact.verdicts.planning.power import per_test_level, samples_for
from counterfact.verdicts.planning.power_unpaired import TAIL, unpaired_power

METHOD = f"Fisher exact per scenario, exact enumeration (binomial tails below {TAIL:g} left out)"


def _power(
    n: int, rates: Sequence[tuple[float, float, float]], level: float, design: Design
) -> float:
    """Exact power at ``n`` runs per side: the weighted sum over the scenario's states."""
    return sum(w * unpaired_power(n, a, b, level, design.alternative) for a, b, w in rates)


def _scenario(
    row: VerdictRecord,
    rates: Sequence[tuple[float, float, float]],
    design: Design,
    target: float,
) -> ScenarioPlan:
    level = per_test_level(design.alpha, design.adjust, design.family_size)
    arm = sum(a * w for a, _, w in rates)
    base = sum(b * w for _, b, w in rates)
    found = None
    if towards(arm, base, design.alternative) or target <= level:
        found = samples_for(target, lambda n: _power(n, rates, level, design))
    t = row.test
    return ScenarioPlan(
        scenario=row.scenario,
        p10=t.n10 / t.pairs if t is not None else 0.0,
        p01=t.n01 / t.pairs if t is not None else 0.0,
        p_arm=arm,
        p_base=base,
        samples=None if found is None else found[0] + excluded(row),
        power=None if found is None else found[1],
    )


def plan_unpaired(rows: Sequence[VerdictRecord], design: Design, target: float) -> Planned:
    """One challenger's rows (one per scenario) planned for ``target`` power."""
    tested = [(r, x) for r in rows if (x := rates_of(r, design)) is not None]
    if not tested:
        return nothing_to_plan()
    scenarios = [_scenario(r, x, design, target) for r, x in tested]
    reach = [(r, x) for (r, x), s in zip(tested, scenarios, strict=True) if s.samples is not None]
    note = left_out_note(len(reach), len(tested) - len(reach), len(rows) - len(tested))
    if not reach:
        return Planned(None, None, METHOD, None, scenarios, note)
    n = max(s.samples for s in scenarios if s.samples is not None)
    level = per_test_level(design.alpha, design.adjust, design.family_size)
    power = min(_power(n - excluded(r), x, level, design) for r, x in reach)
    return Planned(n, power, METHOD, None, scenarios, note)
