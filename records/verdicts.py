"""Verdict records: what ``verdicts.jsonl`` holds."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from counterfact.records.parts import (
    ApplicationRecord,
    ChangedToRecord,
    CostReadingRecord,
    CostRecord,
    DoubtRecord,
    EffectRecord,
    IntervalRecord,
    SequentialRecord,
    SimilarityRecord,
    SimilarityTestRecord,
    TestRecord,
    _Record,
)
from counterfact.records.seedsets import unpack
from counterfact.records.vocabulary import (
    CostClass,
    Decider,
    InterventionKind,
    Reason,
    Standing,
    StatisticalVerdict,
    Verdict,
)

VERDICT_SCHEMA_VERSION: Literal[10] = 10
"""2 added the statistical test (``statistical_verdict``, ``test``, ``effect``,
``similarity_test``); 3 added ``sequential`` and ``test.e_value``; 4 added ``decided_by``,
``tier_verdict`` and ``tier_reason``; 5 added ``sequential.min_effect``,
``sequential.futility_e_value``, ``sequential.futile_because``, ``placebo`` and ``test.n11``; 6
added ``standing`` and ``reasons``; 7 added the reasons ``arm-facet-not-reported`` and
``baseline-facet-not-reported`` and the doubt ``facet-not-reported``; 8 added ``missing_seeds``
(and ``missing_seeds_bits``) and the reason ``runs-missing``, and narrowed ``failed_seeds`` to runs
that ran and failed (before 8 it also held seeds never run); 9 added ``check`` (which check judged
the question: its own ``expect`` or the sweep's comparator); 10 added ``outputs_as_baseline``;
older lines still load. Within 10 the keys' order moved (the tier-level fields of
:class:`TierRecord` ahead of the decision and the claim): the fields and their values are the
same, so it is no new version."""


class TierRecord(_Record):
    """A row's tier-level fields: who it is, what the seed tiers (rule 7) said, and the
    evidence of its runs (seeds, flips, similarity, manifests, cost, what the answers changed
    to). The verdicts layer builds one per (scenario, arm) before its test and standing are
    known; a :class:`VerdictRecord` is one with the decision, the claim and the test added, so
    these fields are declared here once and a verdict line holds them at its top level.
    """

    scenario: str
    arm: str
    is_baseline: bool
    intervention: InterventionKind
    """What the arm changes relative to the baseline (substitution, ablation, restoration ...)."""
    check: str | None = None
    """The check that judged the question's outputs: its own ``expect`` in full
    (``numeric(tolerance=0.01)``, ``one-of(options=["A", "B"])``), or ``sweep default: `` and the
    sweep's comparator (``sweep default: contains``); the same on every row of a question. Null
    in records before version 9."""
    outputs_as_baseline: bool | None = None
    """A challenger's output equals the baseline's, character for character, on every seed
    both ran: whatever it changed, the model saw nothing different (or the server dropped it).
    Null for the baseline, with no seed both ran, and before version 10."""
    placebo: Literal["same-seeds", "fresh-seeds"] | None = None
    """A placebo arm's kind: ``fresh-seeds`` (``placebo: fresh``: independent draws of the
    baseline's configuration, so its statistical verdict is the false-alarm check) or
    ``same-seeds`` (``placebo: true``: the baseline's own seeds, a determinism check); null for
    every other row."""
    tier_verdict: Verdict | None = None
    """The seed tier's verdict (rule 7), on every challenger row: ``verdict`` itself when the
    tiers decided, recorded beside the test's when the test did; null for the baseline (and in
    older records)."""
    tier_reason: Reason | None = None
    """The tier's reason, beside ``tier_verdict``."""
    samples: int
    """Successful runs (failed runs are not samples)."""
    samples_declared: int
    """Runs the sweep declared for this arm (``samples``)."""
    seeds: list[int] | None
    """Seeds of the successful runs: the runs in ``runs.jsonl`` that witness this verdict. Null
    when ``samples_declared`` exceeds 10,000: then ``seeds_bits`` holds them (read either form
    with :meth:`seed_list`)."""
    seeds_bits: str | None = None
    """``seeds`` as a base64 bitmap over ``0..samples_declared-1`` (see
    :mod:`counterfact.records.seedsets`), for sweeps of more than 10,000 seeds."""
    failed_seeds: list[int] | None
    """Seeds whose run ran and failed: its error is in ``runs.jsonl`` (as a bitmap in
    ``failed_seeds_bits`` above 10,000 seeds; :meth:`failed_seed_list` reads either). Before
    version 8 it also held the seeds never run."""
    failed_seeds_bits: str | None = None
    missing_seeds: list[int] | None = None
    """Seeds of ``0..samples_declared-1`` this arm has no record for: never run, because the
    sweep stopped scheduling first (a ``budget``); resuming runs them. Empty when every seed
    ran; null above 10,000 seeds (then ``missing_seeds_bits``; :meth:`missing_seed_list` reads
    either) and in records before version 8 (there ``failed_seeds`` holds them)."""
    missing_seeds_bits: str | None = None
    flips: int | None
    """Flipped samples; null when there was no reference to compare with."""
    flipped_seeds: list[int] | None
    """Seeds whose output flipped; null with no reference, or above 10,000 seeds (then
    ``flipped_seeds_bits``; :meth:`flipped_seed_list` reads either)."""
    flipped_seeds_bits: str | None = None
    similarities: list[float] | None
    """Similarity to the reference per successful seed, in seed order. Null with no reference,
    or when ``similarities_omitted`` (above 10,000 seeds: the summary in ``similarity`` stays;
    the per-seed values are not recorded here — rescore ``runs.jsonl`` to get them)."""
    similarities_omitted: bool = False
    similarity: SimilarityRecord | None
    outside_null_band: bool | None
    """Mean similarity strictly below the baseline's floor; null for the baseline / no band."""
    application: ApplicationRecord
    cost: dict[str, CostRecord] | None
    runs_retried: int = 0
    """Runs of this arm (failed ones included) that needed more than one attempt. A retried run
    is a re-draw conditioned on the first attempt failing, which can bias a probe
    (docs/how-to/resume.md)."""
    runs_from_cache: int = 0
    """Samples read from the run cache rather than run by this sweep."""
    cost_reading: CostReadingRecord | None
    """Ablation arms that reported cost only; null otherwise."""
    cost_class: CostClass | None
    """both / content-bug / cost-cause / no-detected-effect, for ablation arms; else null."""
    cost_class_withheld: Reason | None = None
    """Why an ablation arm has no class: ``runs-failed``, ``runs-missing``, ``unstable-baseline``,
    or a baseline that did not take effect or does not report a declared facet (rule 11)."""
    flip_rate_ci: IntervalRecord | None
    """Exact (Clopper–Pearson) interval of flips/samples; null with no samples or no reference."""
    changed_to: list[ChangedToRecord] | None = None
    """Challengers: the (up to 3) most common outputs of flipped runs (the same once
    normalized counted together), with their seeds; null for the baseline, with no reference
    or no successful run."""
    changed_to_others: int | None = None
    """Flipped runs whose output is not among those listed in ``changed_to``."""
    facets_diff: dict[str, list[Any]] | None = None
    """Challengers: ``{facet.path: [baseline value, arm value]}`` for every leaf that differs
    (null where one side does not declare it)."""

    def seed_list(self) -> list[int]:
        """``seeds``, from the list or the bitmap."""
        return _either(self.seeds, self.seeds_bits, self.samples_declared) or []

    def failed_seed_list(self) -> list[int]:
        """``failed_seeds``, from the list or the bitmap."""
        return _either(self.failed_seeds, self.failed_seeds_bits, self.samples_declared) or []

    def missing_seed_list(self) -> list[int]:
        """``missing_seeds``, from the list or the bitmap (empty in records before version 8)."""
        return _either(self.missing_seeds, self.missing_seeds_bits, self.samples_declared) or []

    def flipped_seed_list(self) -> list[int] | None:
        """``flipped_seeds``, from the list or the bitmap; None with no reference."""
        return _either(self.flipped_seeds, self.flipped_seeds_bits, self.samples_declared)


class _Versioned(_Record):
    # A base of its own only so that a verdict line opens with its version: pydantic orders
    # fields base by base, from the last base in VerdictRecord's bases to the class itself.
    schema_version: Literal[1, 2, 3, 4, 5, 6, 7, 8, 9, 10] = VERDICT_SCHEMA_VERSION
    """Version of this record's layout."""


class VerdictRecord(TierRecord, _Versioned):
    """One line of ``verdicts.jsonl``: one (scenario, arm), baseline included: who it is, what
    the seed tiers said and the evidence of its runs (its tier-level fields), then the decision,
    the claim, the standing and the test.

    No line exceeds about 1 MB whatever the sample count: long seed sets are bitmaps, and
    per-seed similarities are left out above 10,000 seeds (marked so).
    """

    verdict: Verdict | None
    """confirmed / not-confirmed / inconclusive; null for the baseline."""
    reason: Reason | None
    """Machine-readable reason code; null for the baseline."""
    claim: str
    """The verdict in words, with its numbers and bounds; its first sentence states the
    standing."""
    standing: Standing = "not-assessed"
    """``sure`` / ``not-sure`` / ``not-assessed`` (rule 25; not-assessed in records before
    version 6)."""
    reasons: list[DoubtRecord] = Field(default_factory=list)
    """One entry per kind of doubt; empty when ``sure``. An inconclusive row is ``not-sure``,
    its first entry ``verdict-inconclusive``; a row not assessed (the baseline, a row without a
    successful run) has none."""
    decided_by: Decider = "tiers"
    """What decided ``verdict``: the seed tiers (rule 7), or the adjusted test
    (``statistics.decide: test``; the arm- and baseline-not-applied gates still decide first)."""
    statistical_verdict: StatisticalVerdict | None = None
    """The test's verdict beside the tier (rule 14): significant / not-significant /
    underpowered; null for the baseline and when there is nothing to test (no reference)."""
    statistical_verdict_withheld: Reason | None = None
    """Why there is no test: ``arm-not-applied`` / ``baseline-not-applied`` (a manifest
    contradicts a declared facet), or ``arm-facet-not-reported`` / ``baseline-facet-not-reported``
    (the manifests leave a declared facet out): the runs are not evidence about the arm, so no
    p-value is reported for it."""
    test: TestRecord | None = None
    effect: EffectRecord | None = None
    similarity_test: SimilarityTestRecord | None = None
    """Information only: are the arm's similarities lower than the baseline's, pair by pair;
    null unless the comparator decides by similarity (``similarity``)."""
    sequential: SequentialRecord | None = None
    """Sequential sweeps: why and where this challenger stopped; ``samples`` counts the seeds it
    used."""


def _either(listed: list[int] | None, bits: str | None, size: int) -> list[int] | None:
    if listed is not None:
        return listed
    return unpack(bits, size) if bits is not None else None
