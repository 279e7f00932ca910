"""Scenario assessment: references (rule 4), failed runs, records that tell the truth (rule 12)."""

from __future__ import annotations

from counterfact.probes.arms import ArmSpec
from counterfact.probes.comparators import ExactComparator, SimilarityComparator
from counterfact.probes.similarity import TextSimilarity
from counterfact.records.runs import RunError, RunRecord
from counterfact.verdicts.assess import assess_scenario

ARMS = (ArmSpec("base", {}), ArmSpec("alt", {"model": "big"}))


def run(
    arm: str, seed: int, output: str | None, manifest: dict[str, object] | None = None
) -> RunRecord:
    return RunRecord(
        scenario="s",
        arm=arm,
        seed=seed,
        output=output,
        manifest=manifest,
        cost=None,
        error=None if output is not None else RunError(type="RuntimeError", message="x"),
        duration_s=0.1,
        finished_at="2026-01-01T00:00:00+00:00",
    )


def assess(runs: list[RunRecord], reference: str | None = None, comparator=None):  # type: ignore[no-untyped-def]
    return assess_scenario(
        "s", reference, ARMS, "base", runs, 3, comparator or ExactComparator(), TextSimilarity()
    )


def test_reference_from_baseline_seed_zero() -> None:
    runs = [run("base", s, "yes") for s in range(3)] + [run("alt", s, "no") for s in range(3)]
    got = assess(runs)
    assert got.summary.reference.from_ == "baseline-arm"
    assert got.summary.reference.text == "yes"
    base, alt = got.verdicts
    assert base.is_baseline and base.verdict is None and base.reason is None
    assert base.outside_null_band is None
    assert (alt.verdict, alt.reason, alt.flips, alt.flipped_seeds) == (
        "confirmed",
        "majority-flip",
        3,
        [0, 1, 2],
    )


def test_prior_run_reference_is_marked() -> None:
    runs = [run("base", s, "yes") for s in range(3)] + [run("alt", s, "yes") for s in range(3)]
    got = assess(runs, reference="yes")
    assert got.summary.reference.from_ == "prior-run"
    assert got.verdicts[1].reason == "no-flip"


def test_failed_runs_are_not_samples() -> None:
    runs = [run("base", s, "yes") for s in range(3)] + [
        run("alt", 0, "no"),
        run("alt", 1, None),
        run("alt", 2, "no"),
    ]
    alt = assess(runs).verdicts[1]
    assert (alt.samples, alt.samples_declared, alt.seeds, alt.failed_seeds) == (2, 3, [0, 2], [1])
    assert (alt.verdict, alt.reason) == ("inconclusive", "runs-failed")


def test_a_seed_without_a_record_is_missing_not_failed() -> None:
    # issue 27 item 5: a seed never run (the sweep stopped first) has no error to show
    runs = [run("base", s, "yes") for s in range(3)] + [run("alt", 0, "yes")]
    alt = assess(runs).verdicts[1]
    assert (alt.failed_seeds, alt.missing_seeds) == ([], [1, 2])
    assert (alt.verdict, alt.reason) == ("inconclusive", "runs-missing")
    assert "2 of 3 seeds were not run" in alt.claim and "runs.jsonl" not in alt.claim


def test_a_row_with_failed_and_unrun_seeds_is_runs_failed_and_names_both() -> None:
    runs = [run("base", s, "yes") for s in range(3)] + [run("alt", 0, "yes"), run("alt", 1, None)]
    alt = assess(runs).verdicts[1]
    assert (alt.failed_seeds, alt.missing_seeds, alt.reason) == ([1], [2], "runs-failed")
    assert "1 failed of arm 'alt'" in alt.claim and "1 of 3 seeds were not run" in alt.claim


def test_a_baseline_seed_never_run_is_said_so_on_the_baseline_row() -> None:
    runs = [run("base", s, "yes") for s in range(2)] + [run("alt", s, "yes") for s in range(3)]
    base, alt = assess(runs).verdicts
    assert (base.failed_seeds, base.missing_seeds) == ([], [2])
    assert "1 of 3 seeds were not run" in base.claim and "runs-missing" in base.claim
    assert alt.reason == "runs-missing"


def test_baseline_seed_zero_failed_leaves_nothing_scored() -> None:
    runs = [run("base", 0, None)] + [run("base", s, "yes") for s in (1, 2)]
    runs += [run("alt", s, "no") for s in range(3)]
    got = assess(runs)
    assert got.summary.reference.from_ is None and got.summary.reference.text is None
    assert got.summary.null_band is None and got.summary.baseline_stable is None
    alt = got.verdicts[1]
    assert alt.flips is None and alt.similarities is None and alt.flip_rate_ci is None
    assert (alt.verdict, alt.reason) == ("inconclusive", "runs-failed")


def test_band_gates_only_with_similarity_comparator() -> None:
    runs = [run("base", s, "yes") for s in range(3)] + [run("alt", s, "yes") for s in range(3)]
    assert assess(runs).summary.null_band.gates is False  # type: ignore[union-attr]
    gated = assess(runs, comparator=SimilarityComparator())
    assert gated.summary.null_band is not None and gated.summary.null_band.gates
    assert gated.summary.null_band.degenerate


def test_similarity_test_only_when_the_comparator_decides_by_similarity() -> None:
    runs = [run("base", s, "yes") for s in range(3)] + [run("alt", s, "no") for s in range(3)]
    exact = assess(runs, reference="yes").verdicts[1]
    assert exact.test is not None and exact.similarity_test is None
    by_similarity = assess(runs, reference="yes", comparator=SimilarityComparator()).verdicts[1]
    assert by_similarity.test is not None and by_similarity.similarity_test is not None


def test_manifest_mismatch_recorded_without_observed_when_absent() -> None:
    # A declared facet the manifests leave out is not "did not take effect": it is unchecked,
    # with its own reason and a fix in the claim (issue 26 item 7).
    runs = [run("base", s, "yes") for s in range(3)]
    runs += [run("alt", s, "yes", manifest={"other": 1}) for s in range(3)]
    alt = assess(runs).verdicts[1]
    assert alt.application.checked and alt.application.applied is False
    assert alt.application.mismatches == [{"facet": "model", "declared": "big"}]
    assert alt.reason == "arm-facet-not-reported"
    assert "do not report `model`: report `model` in the manifest, or do not declare it" in (
        alt.claim
    )
    assert "did not take effect" not in alt.claim
