"""A plan's fingerprint: what the records of its run directory mean, built from its arms and
scenarios (the model, and what a resume may change, are in :mod:`counterfact.records.fingerprint`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from counterfact.probes.arms import ArmSpec
from counterfact.probes.scenarios import ScenarioSpec
from counterfact.records.fingerprint import Fingerprint, SequentialDesign, canonical_json

_JSON_SCALARS = (str, int, float, bool, type(None))


def _as_json(inputs: Any) -> Any:
    """``inputs`` as JSON reads it back: a flat mapping of text keys to JSON scalars is that
    already (the common case, without a round trip: 10^6 scenarios took 10 s), else the round
    trip through :func:`canonical_json`.
    """
    flat = all(
        type(k) is str and type(v) in _JSON_SCALARS and v == v  # NaN: JSON has none
        for k, v in inputs.items()
    )
    return dict(inputs) if flat else json.loads(canonical_json(dict(inputs)))


def fingerprint(
    runner_identity: str,
    arms: Sequence[ArmSpec],
    scenarios: Sequence[ScenarioSpec],
    design: SequentialDesign | None = None,
    runner_files: Sequence[tuple[str, str]] = (),
    *,
    kind: str | None = None,
    name: str | None = None,
) -> Fingerprint:
    """What the records of a run directory mean: runner, arms' configurations, scenarios' inputs,
    and for a sequential sweep its ``design`` (what its stopping decisions depend on, the cap
    excepted: raising ``max_samples`` on resume is how undecided arms continue).
    """
    return Fingerprint(
        kind=kind,
        name=name,
        runner=runner_identity,
        arms={a.id: json.loads(a.canonical()) for a in arms},
        scenarios={s.id: _as_json(s.inputs) for s in scenarios},
        runner_files=dict(runner_files) if runner_files else None,
        sequential=design,
    )
