"""Arm expansions: declared arms, ``ablate_each`` (leave-one-out) and ``grid`` (combinations).

Expanded arms are built on the baseline: an ``ablate_each`` arm is the baseline plus one more
ablation; a ``grid`` arm is the baseline with some facet leaves set. A grid combination that
equals an arm already declared (usually the baseline itself) is skipped, not refused.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field

from counterfact.defaults import FRESH_SEED_STRIDE, MAX_ARMS
from counterfact.exceptions import ConfigError, RefusalError
from counterfact.orchestrator.config.schema import ArmConfig, SweepConfig
from counterfact.probes.arms import ArmSpec, check_not_ablated, flatten_facets

MAX_FRESH_PLACEBOS = 400
"""``(400 + 1) * FRESH_SEED_STRIDE`` stays below 2**32."""


@dataclass(frozen=True)
class ExpandedArms:
    """All arms of a sweep, with where each came from (for error messages) and what was skipped."""

    arms: tuple[ArmSpec, ...]
    origins: tuple[str, ...]
    """``arms[2]``, ``ablate_each[0]``, ``grid[3]`` ..."""
    skipped: tuple[str, ...] = field(default=())
    """Grid combinations dropped because an identical arm is already declared."""


def _value_text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _placebo(arm: ArmSpec, declared: ArmConfig, base: ArmSpec, index: int, fresh: int) -> ArmSpec:
    """A placebo arm takes the baseline's configuration (rule 17).

    Raises:
        RefusalError: the placebo declares facets, ablations or restorations, or is the
            baseline itself.
    """
    if not declared.placebo:
        return arm
    if arm.id == base.id:
        msg = "the baseline cannot be a placebo; add a separate arm with placebo: true"
        raise RefusalError(msg, field=f"arms[{index}].placebo")
    if not arm.declares_nothing:
        msg = (
            f"placebo arm {arm.id!r} reruns the baseline's configuration, so it declares nothing "
            "itself; remove its facets, ablations and restorations"
        )
        raise RefusalError(msg, field=f"arms[{index}]")
    offset = FRESH_SEED_STRIDE * fresh if declared.placebo == "fresh" else 0
    return ArmSpec(
        arm.id, dict(base.facets), base.ablations, base.restorations, True, seed_offset=offset
    )


def _fresh_ordinals(config: SweepConfig) -> dict[int, int]:
    """``arms[i]`` -> k for the k-th ``placebo: fresh`` arm (1-based), in declaration order."""
    indices = [i for i, a in enumerate(config.arms) if a.placebo == "fresh"]
    if len(indices) > MAX_FRESH_PLACEBOS:
        msg = (
            f"{len(indices)} arms are 'placebo: fresh'; at most {MAX_FRESH_PLACEBOS} are allowed "
            "(their seeds must stay below 2**32 for numpy); use 'placebo: true' for the rest, or "
            "fewer A/A arms with more samples"
        )
        raise ConfigError(msg, field=f"arms[{indices[MAX_FRESH_PLACEBOS]}].placebo")
    return {i: k for k, i in enumerate(indices, start=1)}


def _declared(config: SweepConfig) -> tuple[list[ArmSpec], list[str], ArmSpec]:
    """The declared arms (placebos resolved), where each came from, and the baseline."""
    arms = [
        ArmSpec(
            id=a.id,
            facets=flatten_facets(a.facets, field=f"arms[{i}].facets"),
            ablations=tuple(a.ablations),
            restorations=tuple(a.restorations),
        )
        for i, a in enumerate(config.arms)
    ]
    origins = [f"arms[{i}]" for i in range(len(arms))]
    if not arms:
        arms.append(ArmSpec(id="baseline", facets={}))
        origins.append("baseline (implicit: no arms declared)")
    base_id = config.baseline_id()
    base = next((a for a in arms if a.id == base_id), arms[0])
    pairs = enumerate(zip(arms, config.arms, strict=False))  # no arms: the implicit baseline
    fresh = _fresh_ordinals(config)
    declared = [_placebo(a, c, base, i, fresh.get(i, 0)) for i, (a, c) in pairs]
    return declared + arms[len(declared) :], origins, base


def expand_arms(config: SweepConfig) -> ExpandedArms:
    """Declared arms, then the ``ablate_each`` arms, then the ``grid`` arms.

    Raises:
        ConfigError: an ``ablate_each`` id listed twice, or an empty or ill-formed grid axis.
    """
    arms, origins, base = _declared(config)
    fields = [f"ablate_each[{i}]" for i in range(len(config.ablate_each))]
    check_not_ablated(config.ablate_each, base, fields)
    for i, item in enumerate(config.ablate_each):
        arms.append(
            ArmSpec(
                id=f"without:{item}",
                facets=dict(base.facets),
                ablations=(*base.ablations, item),
                restorations=base.restorations,
            )
        )
        origins.append(f"ablate_each[{i}]")
    skipped: list[str] = []
    if config.grid:
        axes = list(config.grid.items())
        combinations = math.prod(len(values) for _, values in axes)
        if len(arms) + combinations > MAX_ARMS:
            msg = (
                f"the grid makes {combinations:,} arms (the product of its axes' lengths), more "
                f"than the {MAX_ARMS:,} one sweep may hold; shorten an axis or split the grid"
            )
            raise ConfigError(msg, field="grid")
        for path, values in axes:
            if not values:
                msg = "a grid axis needs at least one value"
                raise ConfigError(msg, field=f"grid.{path}")
            flatten_facets({path: values[0]}, field=f"grid.{path}")
        taken = {a.canonical() for a in arms}
        for n, combo in enumerate(itertools.product(*(values for _, values in axes))):
            leaves = dict(zip((p for p, _ in axes), combo, strict=True))
            facets = flatten_facets({**base.facets, **leaves}, field="grid")
            arm_id = ",".join(f"{p}={_value_text(v)}" for p, v in leaves.items())
            arm = ArmSpec(arm_id, facets, base.ablations, base.restorations)
            if arm.canonical() in taken:
                skipped.append(arm_id)
                continue
            taken.add(arm.canonical())
            arms.append(arm)
            origins.append(f"grid[{n}]")
    return ExpandedArms(tuple(arms), tuple(origins), tuple(skipped))
