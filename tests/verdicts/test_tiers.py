"""rule 7 tiers, in refusal order, with the runs-failed check first (rules 3, 5)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from counterfact.probes.arms import Intervention
from counterfact.probes.manifest import Application, Mismatch
from counterfact.probes.null_band import build_null_band
from counterfact.probes.stats import ProbeStats, summarize_probe
from counterfact.verdicts.tiers import ArmEvidence, ScenarioContext, baseline_claim, decide_arm

APPLIED = Application(checked=True, applied=True, manifests_seen=3, mismatches=())
UNCHECKED = Application(checked=False, applied=None, manifests_seen=0, mismatches=())
NOT_APPLIED = Application(
    checked=True,
    applied=False,
    manifests_seen=3,
    mismatches=(Mismatch("retrieval", "rerank", "bm25"),),
)


def probe(flips: Sequence[bool], sims: Sequence[float] | None = None) -> ProbeStats:
    n = len(flips)
    return summarize_probe(list(range(n)), list(flips), list(sims or [0.9] * n), [None] * n)


def ctx(base: ProbeStats, *, gates: bool = True, samples: int = 3) -> ScenarioContext:
    return ScenarioContext(
        scenario="q1",
        baseline="base",
        baseline_stats=base,
        baseline_stable=base.flips == 0,
        band=build_null_band(base.similarities, gates=gates),
        comparator="similarity < 0.8",
        samples=samples,
    )


STABLE = probe([False] * 3, [0.95, 0.9, 0.92])
SWITCH = Intervention("substitution", "switching to arm 'arm'")
REMOVE = Intervention("ablation", "removing 'tool:search'", removed=("tool:search",))


def decide(
    arm: ProbeStats,
    *,
    base: ProbeStats = STABLE,
    app: Application = APPLIED,
    gates: bool = True,
    kind: Intervention = SWITCH,
) -> tuple[str, str, str]:
    c = ctx(base, gates=gates)
    outside = c.band.outside(arm.similarity.mean) if c.band and arm.similarity else None
    d = decide_arm(ArmEvidence("arm", arm, app, outside, kind), c)
    return d.verdict, d.reason, d.claim


def test_confirmed_majority_flip_outside_band() -> None:
    verdict, reason, claim = decide(probe([True, True, False], [0.3, 0.4, 0.95]))
    assert (verdict, reason) == ("confirmed", "majority-flip")
    assert "2 of 3 seeds" in claim and "scenario 'q1'" in claim and "similarity < 0.8" in claim


def test_runs_failed_comes_before_everything() -> None:
    two = probe([True, True], [0.1, 0.1])
    assert decide(two, base=probe([True, False, False]), app=NOT_APPLIED)[:2] == (
        "inconclusive",
        "runs-failed",
    )


def test_failed_baseline_makes_challenger_inconclusive() -> None:
    verdict, reason, claim = decide(probe([True] * 3, [0.1] * 3), base=probe([False, False]))
    assert (verdict, reason) == ("inconclusive", "runs-failed")
    assert "baseline 'base' finished only 2 of 3" in claim


def test_unstable_baseline_one_flip_in_three_is_enough() -> None:
    base = probe([False, True, False], [0.9, 0.5, 0.9])
    assert decide(probe([True] * 3, [0.1] * 3), base=base)[:2] == (
        "inconclusive",
        "unstable-baseline",
    )


def test_unstable_baseline_before_manifest() -> None:
    base = probe([True, False, False])
    assert decide(probe([True] * 3), base=base, app=NOT_APPLIED)[1] == "unstable-baseline"


def test_arm_not_applied_names_the_facet() -> None:
    verdict, reason, claim = decide(probe([True] * 3, [0.1] * 3), app=NOT_APPLIED)
    assert (verdict, reason) == ("inconclusive", "arm-not-applied")
    assert "retrieval='rerank'" in claim and "'bm25'" in claim


def test_unchecked_manifest_is_not_a_refusal() -> None:
    assert decide(probe([True] * 3, [0.1] * 3), app=UNCHECKED)[0] == "confirmed"


def test_inside_null_band_when_band_gates() -> None:
    # Majority flips but the mean similarity (0.9) is not below the baseline floor (0.9).
    arm = probe([True, True, False], [0.85, 0.85, 1.0])
    assert decide(arm)[:2] == ("inconclusive", "inside-null-band")


def test_band_does_not_gate_other_comparators() -> None:
    arm = probe([True, True, False], [0.85, 0.85, 1.0])
    assert decide(arm, gates=False)[:2] == ("confirmed", "majority-flip")


def test_mean_equal_to_floor_is_inside() -> None:
    arm = probe([True, True, True], [0.9, 0.9, 0.9])
    assert decide(arm)[1] == "inside-null-band"


def test_minority_flip() -> None:
    assert decide(probe([True, False, False], [0.1, 0.9, 0.9]))[:2] == (
        "inconclusive",
        "minority-flip",
    )


def test_no_flip() -> None:
    verdict, reason, claim = decide(probe([False] * 3))
    assert (verdict, reason) == ("not-confirmed", "no-flip")
    assert "3 seeds" in claim


@pytest.mark.parametrize(
    ("base", "text"),
    [
        (STABLE, "stable"),
        (probe([False, True, False]), "unstable"),
        # a baseline seed that ran but was not compared (a judge that gave no answer) is not
        # called an error: the claim says "scored", and names both ways a run goes unscored
        (probe([False, False]), "has only 2 of 3 scored runs: the others failed, or ran but"),
    ],
)
def test_baseline_claim(base: ProbeStats, text: str) -> None:
    assert text in baseline_claim(ctx(base))


# rule 9: ablations and restorations use the same tiers without the manifest and band
# tiers, and their claims name the intervention.


def test_ablation_skips_the_band_tier() -> None:
    arm = probe([True, True, False], [0.85, 0.85, 1.0])
    assert decide(arm)[1] == "inside-null-band"
    verdict, reason, claim = decide(arm, kind=REMOVE)
    assert (verdict, reason) == ("confirmed", "majority-flip")
    assert claim.startswith("Confirmed: removing 'tool:search' changed the output on 2 of 3")
    assert "null-band" not in claim


def test_ablation_skips_the_manifest_tier() -> None:
    assert decide(probe([True] * 3, [0.1] * 3), app=NOT_APPLIED, kind=REMOVE)[0] == "confirmed"


def test_ablation_keeps_runs_failed_and_unstable_baseline() -> None:
    assert decide(probe([True, True]), kind=REMOVE)[1] == "runs-failed"
    unstable = probe([True, False, False])
    assert decide(probe([True] * 3), base=unstable, kind=REMOVE)[1] == "unstable-baseline"


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        (REMOVE, "removing 'tool:search' left the reference output in place"),
        (Intervention("restoration", "restoring 'fact:7'"), "restoring 'fact:7' left"),
    ],
)
def test_not_confirmed_names_the_intervention(kind: Intervention, text: str) -> None:
    assert text in decide(probe([False] * 3), kind=kind)[2]


def test_minority_names_the_intervention() -> None:
    claim = decide(probe([True, False, False]), kind=REMOVE)[2]
    assert "removing 'tool:search' changed the output on only 1 of 3" in claim
