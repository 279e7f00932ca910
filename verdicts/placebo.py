"""The determinism check a ``placebo: true`` arm is (rule 23), read from its same-seed pairs.

A same-seeds placebo reruns the baseline's configuration on the baseline's own seeds. A program
controlled by its seed gives the same output on the same seed, so every pair is judged alike:
the same flip against the reference and the same similarity to it. A pair judged differently is
a run the seed did not reproduce: the check failed, whatever the placebo's verdict and test say
(a nondeterministic program can still be "not significant" against itself). That is worded as a
doubt on the row (``placebo-not-deterministic``) and a sentence in its claim.

Only the judgements are compared (the tallies keep no outputs), so a pair whose outputs differ
but are judged alike is not seen: a disagreement proves the check failed; none does not prove
the program deterministic.
"""

from __future__ import annotations

import numpy as np

from counterfact.probes.tally import ArmTally
from counterfact.verdicts.standing import Doubt
from counterfact.verdicts.wording.shared import seed_list

SIMILARITY_TOLERANCE = 1e-9
"""Similarities closer than this are the same (the measure's own float noise)."""


def determinism_doubt(arm: ArmTally, base: ArmTally) -> Doubt | None:
    """``placebo-not-deterministic`` for a same-seeds placebo with a pair judged differently
    (on the arm's seeds ``0..admitted-1`` both scored); None for any other arm, or none.
    """
    if arm.arm.placebo_kind != "same-seeds":
        return None
    n = arm.admitted
    both = arm.scored[:n] & base.scored[:n]
    flips = both & (arm.flipped[:n] != base.flipped[:n])
    a, b = arm.similarity[:n], base.similarity[:n]
    finite = np.isfinite(a) & np.isfinite(b)
    moved = both & finite & ~np.isclose(a, b, rtol=0.0, atol=SIMILARITY_TOLERANCE)
    differ = flips | moved
    if not differ.any():
        return None
    seeds = tuple(int(s) for s in np.flatnonzero(differ))
    detail = (
        f"the determinism check failed: on {len(seeds)} of {int(both.sum())} seeds the placebo "
        "and the baseline, run with the same configuration and seed, were judged differently "
        f"({int(flips.sum())} flipped on one only, {int(moved.sum())} with another similarity "
        "to the reference): the program is not controlled by its seed"
    )
    return Doubt("placebo-not-deterministic", len(seeds), detail, seeds)


def determinism_sentence(doubt: Doubt) -> str:
    """The claim's sentence for a failed determinism check."""
    return (
        f"Determinism check failed: on {doubt.count} seed(s) (seeds {seed_list(doubt.seeds)}) "
        "this rerun of the baseline's configuration was judged differently from the baseline "
        "on the same seed, so the program is not controlled by its seed: a seeded rerun does "
        "not reproduce a run, and a same-seed pair holds less fixed than it seems (use "
        "placebo: fresh for the false-alarm check)."
    )
