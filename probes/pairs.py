"""Seed pairs of an arm and its baseline on one scenario: the unit of the paired test."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from counterfact.probes.tally import ArmTally

BoolArray = np.ndarray[Any, np.dtype[np.bool_]]
FloatArray = np.ndarray[Any, np.dtype[np.float64]]


@dataclass(frozen=True)
class Pairs:
    """Per-seed flip bits and similarities of an arm and its baseline, on the seeds both were
    scored on (successful runs against a reference), in seed order.
    """

    arm: BoolArray
    base: BoolArray
    arm_similarity: FloatArray
    base_similarity: FloatArray
    excluded: int
    """Pairs left out: seed 0 when the reference is the baseline's own seed-0 output (rule 13)."""

    @cached_property
    def n10(self) -> int:
        """Arm flipped, baseline held."""
        return int(np.count_nonzero(self.arm & ~self.base))

    @cached_property
    def n01(self) -> int:
        """Baseline flipped, arm held."""
        return int(np.count_nonzero(~self.arm & self.base))

    @cached_property
    def n11(self) -> int:
        """Both flipped."""
        return int(np.count_nonzero(self.arm & self.base))

    @property
    def size(self) -> int:
        """Pairs the test rests on."""
        return len(self.arm)


def pairs_of(arm: ArmTally, base: ArmTally, *, exclude_seed0: bool) -> Pairs:
    """The pairs of ``arm`` and ``base`` (tallies of one scenario) over the arm's admitted seeds
    ``0..arm.admitted-1`` (the baseline may hold more, in a sequential sweep).
    """
    n = arm.admitted
    both = arm.scored[:n] & base.scored[:n]
    excluded = 0
    if exclude_seed0 and len(both) and both[0]:
        both = both.copy()
        both[0] = False
        excluded = 1
    return Pairs(
        arm=arm.flipped[:n][both],
        base=base.flipped[:n][both],
        arm_similarity=arm.similarity[:n][both],
        base_similarity=base.similarity[:n][both],
        excluded=excluded,
    )
