"""``counterfact plan`` for a sequential pilot: the ``max_samples`` its e-process needs.

Per scenario, the least cap on the wave grid at which the e-process — looked at after every wave
with the sweep's threshold and futility rules — stops as significant with the power asked for
(simulated, :func:`~counterfact.verdicts.planning.power_sequential.cap_for`), and the mean seeds an
arm uses at the recommended cap. The figure is the most any scenario within reach needs, with the
least power any of them has there.

A sequential pilot's rates lean towards the extreme: arms that stopped early as significant did so
on data that looked strong, arms stopped as futile on data that looked weak. The plan is then
optimistic for the first and pessimistic for the second; ``--effect`` at the least effect worth
finding avoids both. With ``--effect`` each scenario is a mixture of states
(:func:`counterfact.verdicts.planning.design.cells_of`: the effect added per question, a copies
question moving whole), each simulated arm drawing its state once.
"""

from __future__ import annotations

from collections.abc import Sequence

from counterfact.records.plan import ScenarioPlan
from counterfact.records.verdicts import VerdictRecord
from counterfact.verdicts.planning.design import (
    Design,
    Planned,
    cells_of,
    excluded,
    left_out_note,
    nothing_to_plan,
    towards,
)
from counterfact.verdicts.planning.power import FRESH, Cells, Mixed, mean_of
from counterfact.verdicts.planning.power_sequential import (
    CAP,
    DRAWS,
    CapFound,
    cap_for,
    sequential_power,
)
from counterfact.verdicts.stats.settings import Waves

METHOD = f"sequential e-process per scenario, simulated ({DRAWS:,} draws)"


def _found(
    row: VerdictRecord,
    cells: Cells | Mixed,
    waves: Waves,
    design: Design,
    target: float,
    seed: int,
) -> CapFound | None:
    mean = mean_of(cells)
    if not towards(mean.p10, mean.p01, design.alternative) and target > design.alpha:
        return None
    return cap_for(target, cells, waves, excluded(row), seed)


def plan_sequential(
    rows: Sequence[VerdictRecord], design: Design, target: float, seed: int
) -> Planned:
    """One challenger's rows (one per scenario) planned for ``target`` power."""
    waves = design.waves
    tested = [(r, c) for r in rows if (c := cells_of(r, design)) is not None]
    if waves is None or not tested:
        return nothing_to_plan()
    found = [_found(r, c, waves, design, target, seed) for r, c in tested]
    reached = [f for f in found if f is not None]
    note = left_out_note(len(reached), len(found) - len(reached), len(rows) - len(tested))
    cap = max((f.cap for f in reached), default=None)
    at_cap = [
        # fresh draws, not the search's: the power given carries no winner's curse
        None if cap is None else sequential_power(cap, c, waves, excluded(r), seed + FRESH)
        for r, c in tested
    ]
    scenarios = [
        ScenarioPlan(
            scenario=r.scenario,
            p10=mean_of(c).p10,
            p01=mean_of(c).p01,
            samples=None if f is None else f.cap,
            power=None if f is None else f.power,
            expected_samples=None if a is None else a.mean_seeds,
        )
        for (r, c), f, a in zip(tested, found, at_cap, strict=True)
    ]
    if cap is None:
        return Planned(None, None, METHOD, None, scenarios, note, CAP)
    worst = min(
        (a for f, a in zip(found, at_cap, strict=True) if f is not None and a is not None),
        key=lambda a: a.power,
    )
    return Planned(cap, worst.power, METHOD, worst.se, scenarios, note, CAP)
