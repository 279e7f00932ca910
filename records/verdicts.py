"""Verdict and summary records: what ``verdicts.jsonl`` and ``summary.json`` hold."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from counterfact.records.seedsets import unpack
from counterfact.records.vocabulary import (
    Adjustment,
    Alternative,
    BisectReason,
    BisectVerdict,
    CostClass,
    Decider,
    DoubtCode,
    Family,
    InterventionKind,
    Pairing,
    Reason,
    Standing,
    StatisticalVerdict,
    StoppedFor,
    Verdict,
)

VERDICT_SCHEMA_VERSION: Literal[6] = 6
"""2 added the statistical test (``statistical_verdict``, ``test``, ``effect``,
``similarity_test``); 3 added ``sequential`` and ``test.e_value``; 4 added ``decided_by``,
``tier_verdict`` and ``tier_reason``; 5 added ``sequential.min_effect``,
``sequential.futility_e_value``, ``sequential.futile_because``, ``placebo`` and ``test.n11``; 6
added ``standing`` and ``reasons``; older lines still load."""
SUMMARY_SCHEMA_VERSION: Literal[6] = 6
"""2 added ``statistics`` and ``pooled``; 3 added ``sequential``; 4 added ``concurrency``,
``budget`` and status ``budget-exhausted``; 5 added ``cache_entries_rejected``; 6 added
``pooled[].effect``; older files still load."""


class _Record(BaseModel):
    # from_attributes: a record is read straight off the domain result it records (a frozen
    # dataclass with the same field names), so no field list is kept in step by hand
    model_config = ConfigDict(
        frozen=True, extra="forbid", populate_by_name=True, from_attributes=True
    )


class SimilarityRecord(_Record):
    """Mean, min, max and population stdev of similarities to the reference."""

    mean: float
    min: float
    max: float
    stdev: float


class CostRecord(_Record):
    """One cost key over the runs that reported it."""

    median: float
    min: float
    max: float
    reported: int | None = None
    """How many runs reported the key (null in version-1 records)."""


class ApplicationRecord(_Record):
    """The manifest check (rule 6)."""

    checked: bool
    """False when no run reported a manifest or the arm declares no facets."""
    applied: bool | None
    """Null when not checked."""
    manifests_seen: int
    """How many successful runs reported a manifest."""
    mismatches: list[dict[str, Any]]
    """``{facet, declared, observed?}``; no ``observed`` when the manifest lacked the key. In the
    order of the lowest seed that showed each; at most 50 (see ``mismatches_omitted``)."""
    mismatches_omitted: int = 0
    """Further distinct mismatches, counted but not listed."""
    manifests_mismatched: int | None = None
    """How many of the manifests showed at least one mismatch (null in older records)."""


class DoubtRecord(_Record):
    """One reason for doubt about a verdict (rule 25): what kind, how many runs or probes, which
    seeds witness it.
    """

    code: DoubtCode
    count: int
    """Runs (or probes, pairs) it concerns; a floor when ``at_least``."""
    at_least: bool = False
    """True when ``count`` is a floor (the sweep stopped before every run was seen)."""
    seeds: list[int] = Field(default_factory=list)
    """The seeds that witness it, lowest first, at most 20 (empty where it has no seeds)."""
    seeds_omitted: int = 0
    """Witnessing seeds beyond those listed."""
    detail: str
    """The doubt in a few words."""


class Interval(_Record):
    """A two-sided confidence interval: the one interval type every record uses."""

    low: float
    high: float
    level: float
    """Confidence level, e.g. 0.95."""
    method: str
    """How it was computed (``clopper-pearson``, ``Newcombe paired (method 10)`` ...)."""


IntervalRecord = Interval
"""The flip rate's interval (``flip_rate_ci``): an :class:`Interval`; the old name."""


class CostReadingRecord(_Record):
    """rule 11's reading of one ablation arm."""

    key: str
    """The cost key judged for consistency, the placebo band and the cause."""
    saved: dict[str, float | None]
    """Baseline median − arm median per cost key; null when either side lacks the key."""
    consistent: bool
    """Every rerun of the arm used no more of ``key`` than the baseline median."""
    stable: bool
    """Consistent, and a placebo band existed to clear."""
    cost_cause: bool
    """Stable, saved >= 1 and saved > the band's max."""
    placebo_band: list[float]
    """``saved[key]`` of the other non-confirmed ablation arms (leave-one-out)."""
    placebo_max: float | None
    reported: int | None = None
    """How many of the arm's runs reported ``key`` (the reading rests on those)."""


class AdjustmentRecord(_Record):
    """How a p-value was adjusted for multiplicity (rule 15)."""

    method: Adjustment
    family: Family
    family_size: int
    """Tests in the family (every (scenario, challenger) of the sweep, or of the scenario)."""


class ChangedToRecord(_Record):
    """One output a flipped run gave instead of the reference."""

    output: str
    """The output (cut to 500 characters)."""
    count: int
    """Flipped runs that gave it."""
    seeds: list[int]
    """Their seeds (the first 20)."""


class TestRecord(_Record):
    """The test beside the tier (rules 13-15)."""

    method: str
    pairing: Pairing
    alternative: Alternative = "greater"
    """``greater``: does the arm flip more often than the baseline; ``less``: less often (a fix);
    ``two-sided``: either."""
    n10: int
    """Pairs where the arm flipped and the baseline did not."""
    n01: int
    """Pairs where the baseline flipped and the arm did not."""
    pairs: int
    pairs_excluded: int
    """Pair 0 when the reference is the baseline's own seed-0 output (rule 13)."""
    p_value: float
    p_adjusted: float | None = None
    alpha: float
    adjustment: AdjustmentRecord | None = None
    min_attainable_p: float
    """The smallest p-value any outcome at these samples could give; above alpha the verdict is
    ``underpowered``."""
    e_value: float | None = None
    """Sequential sweeps: the e-value the test rests on (``p_value`` is ``min(1, 1/e_value)``)."""
    n11: int | None = None
    """Pairs where both flipped (null in records before version 5)."""


class SequentialRecord(_Record):
    """Why and where a challenger stopped sampling (rule 19)."""

    stopped_for: StoppedFor
    """``significant``: the e-value reached ``threshold``; ``futile``: no outcome of the seeds left
    up to ``max_samples`` could lift it to ``1/alpha``, or (with ``min_effect``) an effect of at
    least ``min_effect`` was ruled out; ``max-samples``: the cap; ``untestable``: no reference to
    score against."""
    seeds_used: int
    """Seeds ``0..seeds_used-1`` the verdict rests on."""
    max_samples: int
    e_value: float
    threshold: float
    """The e-value at which the arm is significant whatever its family shows."""
    n10: int
    n01: int
    min_effect: float | None = None
    """``sequential.min_effect``: the least flip-rate difference worth finding (null without)."""
    futility_e_value: float | None = None
    """With ``min_effect``: the e-value against "the effect is at least ``min_effect``"; the arm
    stops as futile once it reaches ``1/alpha``."""
    futile_because: Literal["unreachable", "below-min-effect"] | None = None
    """Why a futile arm stopped: ``unreachable`` (the threshold was out of reach by the cap) or
    ``below-min-effect`` (an effect of ``min_effect`` or more was ruled out)."""


class EffectRecord(Interval):
    """Paired flip-rate difference, arm minus baseline, with its interval (rule 16)."""

    diff: float
    method: str = "Newcombe paired (method 10)"


class SimilarityTestRecord(_Record):
    """Paired one-sided test on similarities (rule 16), information only."""

    statistic: float
    p_value: float
    method: str = "Wilcoxon signed-rank (one-sided, paired)"


class PooledEffectRecord(Interval):
    """One challenger's flip-rate difference (arm minus baseline) pooled over its scenarios, with
    an interval that respects clustering by scenario, and whether the scenarios agree.
    """

    diff: float
    """Summed ``n10 - n01`` over summed pairs."""
    heterogeneity_p: float | None
    """Cochran's Q p-value over the scenarios' differences (null with one scenario)."""
    i_squared: float | None
    """Share of the spread between scenarios beyond chance (Higgins' I², 0 to 1)."""
    heterogeneous: bool
    """True when Q's p is below 0.05: the scenarios' effects disagree, and the pooled figure
    averages over different effects."""
    disagreeing: list[str]
    """Scenarios whose own effect stands out from the median scenario's (Bonferroni over the
    scenarios)."""


class PooledRecord(_Record):
    """One challenger tested across every scenario (rule 18): McNemar stratified by scenario
    (discordant counts summed), adjusted over the challengers (its own family).
    """

    arm: str
    scenarios: int
    n10: int
    n01: int
    pairs: int
    p_value: float
    p_adjusted: float
    statistical_verdict: StatisticalVerdict
    method: str = "McNemar stratified by scenario"
    e_value: float | None = None
    """Sequential sweeps: the product of the challenger's stopped e-values over its scenarios
    (an e-value, the scenarios' runs being independent); ``p_value`` is ``min(1, 1/e_value)``."""
    effect: PooledEffectRecord | None = None
    """The pooled effect with its cluster-robust interval and heterogeneity (null in summaries
    before version 6, and when a scenario's test lacks ``n11``)."""


class SequentialSummary(_Record):
    """A sequential sweep at a glance (``summary.json``)."""

    max_samples: int
    wave: int
    runs_at_max_samples: int
    """Runs a fixed sweep at ``max_samples`` would record: scenarios x arms x max_samples."""
    runs_recorded: int
    """Runs this sweep's records hold (seeds below ``max_samples``; run-ahead seeds included)."""
    runs_saved: int
    """``runs_at_max_samples - runs_recorded``."""
    runs_cancelled: int
    """Queued runs withdrawn when their arm was decided (this invocation)."""
    stopped: dict[str, int]
    """Challengers by why they stopped."""


class RollupRecord(_Record):
    """One challenger across every scenario of the sweep (``summary.json`` ``rollup``)."""

    arm: str
    scenarios: int
    verdicts: dict[str, int]
    """Scenarios by tier: ``{"confirmed": 2, "inconclusive": 1}``."""
    significant: int
    """Scenarios where its test was significant (after adjustment)."""
    tested: int
    """Scenarios where it had a test (not withheld, a reference to score against)."""
    withheld: int = 0
    """Scenarios where its test was withheld because the arm or the baseline did not take effect
    (manifests): left out of the family adjustment and the pooled test."""
    summary: str
    """The line the table prints: ``prompt=v2: confirmed on 2 of 2 scenarios; ...``."""


class StatisticsRecord(_Record):
    """The ``statistics`` settings a sweep was judged with."""

    alpha: float
    adjust: Adjustment
    family: Family
    pairing: Pairing
    decide: Decider = "tiers"
    """What decided each row's headline verdict (null in older files: the tiers)."""
    alternative: Alternative = "greater"
    """The direction every test looked in."""
    min_effect: float | None = None
    """The declared minimal flip-rate difference worth finding (``decide: test``)."""


class VerdictRecord(_Record):
    """One line of ``verdicts.jsonl``: one (scenario, arm), baseline included.

    No line exceeds about 1 MB whatever the sample count: long seed sets are bitmaps, and
    per-seed similarities are left out above 10,000 seeds (marked so).
    """

    schema_version: Literal[1, 2, 3, 4, 5, 6] = VERDICT_SCHEMA_VERSION
    """Version of this record's layout."""
    scenario: str
    arm: str
    is_baseline: bool
    intervention: InterventionKind
    """What the arm changes relative to the baseline (substitution, ablation, restoration ...)."""
    placebo: Literal["same-seeds", "fresh-seeds"] | None = None
    """A placebo arm's kind: ``fresh-seeds`` (``placebo: fresh``: independent draws of the
    baseline's configuration, so its statistical verdict is the false-alarm check) or
    ``same-seeds`` (``placebo: true``: the baseline's own seeds, a determinism check); null for
    every other row."""
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
    """One entry per kind of doubt; empty when ``sure``. An inconclusive row is not assessed
    (it has no answer) but keeps its doubts here; the baseline row has none."""
    decided_by: Decider = "tiers"
    """What decided ``verdict``: the seed tiers (rule 7), or the adjusted test
    (``statistics.decide: test``; the arm- and baseline-not-applied gates still decide first)."""
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
    :mod:`counterfact.verdicts.seedsets`), for sweeps of more than 10,000 seeds."""
    failed_seeds: list[int] | None
    """Seeds whose run failed or is missing (as a bitmap in ``failed_seeds_bits`` above 10,000
    seeds; :meth:`failed_seed_list` reads either)."""
    failed_seeds_bits: str | None = None
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
    """Why an ablation arm has no class: ``runs-failed`` or ``unstable-baseline`` (rule 11)."""
    flip_rate_ci: IntervalRecord | None
    """Exact (Clopper–Pearson) interval of flips/samples; null with no samples or no reference."""
    statistical_verdict: StatisticalVerdict | None = None
    """The test's verdict beside the tier (rule 14): significant / not-significant /
    underpowered; null for the baseline and when there is nothing to test (no reference)."""
    statistical_verdict_withheld: Reason | None = None
    """Why there is no test: ``arm-not-applied`` / ``baseline-not-applied`` (the runs are not
    evidence about the arm, so no p-value is reported for it)."""
    test: TestRecord | None = None
    effect: EffectRecord | None = None
    similarity_test: SimilarityTestRecord | None = None
    """Information only: are the arm's similarities lower than the baseline's, pair by pair."""
    sequential: SequentialRecord | None = None
    """Sequential sweeps: why and where this challenger stopped; ``samples`` counts the seeds it
    used."""
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

    def flipped_seed_list(self) -> list[int] | None:
        """``flipped_seeds``, from the list or the bitmap; None with no reference."""
        return _either(self.flipped_seeds, self.flipped_seeds_bits, self.samples_declared)


def _either(listed: list[int] | None, bits: str | None, size: int) -> list[int] | None:
    if listed is not None:
        return listed
    return unpack(bits, size) if bits is not None else None


class ReferenceRecord(_Record):
    """Where a scenario's reference came from (rule 4)."""

    from_: Literal["prior-run", "baseline-arm"] | None = Field(alias="from")
    """``prior-run`` when the scenario gave one; ``baseline-arm`` for the baseline's seed 0."""
    text: str | None
    """Null when the baseline's seed-0 run failed and there is no reference."""


class NullBandRecord(_Record):
    """The baseline's own spread (rule 5)."""

    floor: float
    degenerate: bool
    gates: bool
    similarity: SimilarityRecord


class ScenarioSummary(_Record):
    """Per-scenario facts of a sweep."""

    id: str
    reference: ReferenceRecord
    baseline: str
    baseline_stable: bool | None
    """Null when the baseline could not be scored."""
    null_band: NullBandRecord | None
    arms: list[str]
    """Arm order, baseline first."""


class _Provenance(_Record):
    """Where a record came from: the resolved config, what the user passed, versions, times."""

    name: str
    config: dict[str, Any]
    """The resolved configuration (after defaults and overrides)."""
    config_source: str | None
    """The config file the sweep came from; null for the Python API."""
    overrides: list[str]
    """``--set`` / flag overrides applied on top of the file, as given."""
    counterfact_version: str
    python_version: str | None = None
    """The Python that ran the driver (null in older records)."""
    ray_version: str | None = None
    """The installed Ray, when there is one (null in older records, or without Ray)."""
    started_at: str
    finished_at: str


class ConcurrencyRecord(_Record):
    """How the sweep's allowed concurrency moved (runs that overlapped: ``concurrency``, an
    ``async def`` runner, or ``rate_limit``).
    """

    configured: int
    """``executor.concurrency`` (or its default): the ceiling."""
    final: int
    """The limit when the sweep ended."""
    lowest: int
    """The lowest limit reached (429 episodes cut it by 0.8 each)."""
    cuts: int
    """429 episodes that cut the limit."""
    refusals: int
    """Calls the API refused (HTTP 429 or ``RateLimited``); each waited and ran again."""
    requests_per_minute: float | None = None
    """``rate_limit.requests_per_minute``, when set."""
    moves: list[tuple[float, int, Literal["cut", "grow"]]] = Field(default_factory=list)
    """Each change: seconds since the first run, the new limit, and why."""


class BudgetRecord(_Record):
    """The ``budget`` and what was spent against it."""

    limits: dict[str, float]
    """The configured limits per cost key."""
    spent: dict[str, float]
    """Recorded spend per cost key over every run of the directory (resumed ones included)."""
    exhausted: list[str] = Field(default_factory=list)
    """Cost keys whose limit stopped scheduling; empty when the sweep fit its budget."""
    runs_not_started: int | None = None
    """Planned runs left unstarted by the budget (null for a sequential sweep: no fixed plan)."""


class SweepSummary(_Provenance):
    """``summary.json``: provenance and per-scenario facts of one sweep."""

    schema_version: Literal[1, 2, 3, 4, 5, 6] = SUMMARY_SCHEMA_VERSION
    status: Literal["complete", "interrupted", "failed", "budget-exhausted"] = "complete"
    """``interrupted`` when Ctrl-C or SIGTERM stopped the sweep (then there are no verdicts
    yet); ``failed`` when every run failed, or scheduling stopped because the runner evidently
    cannot work (``failure`` says why); ``budget-exhausted`` when the ``budget`` stopped
    scheduling (the verdicts judge the runs that fit; raise it and resume to continue)."""
    concurrency: ConcurrencyRecord | None = None
    """How the allowed concurrency moved; null when runs did not overlap."""
    budget: BudgetRecord | None = None
    """The spend budget; null without ``budget``."""
    failure: str | None = None
    """Why the sweep failed, in words; null unless ``status`` is ``failed``."""
    runs_used: int
    """Runner calls made by this invocation, retries included (runs read back or taken from the
    cache excluded)."""
    runs_reused: int = 0
    """Runs read back from this directory's ``runs.jsonl`` (a resume)."""
    runs_from_cache: int = 0
    """Runs taken from the run cache."""
    cache_entries_rejected: int = 0
    """Run-cache entries found but not used: damaged, edited, or not the run asked for (their
    runs were executed and the entries rewritten)."""
    torn_line_dropped: bool = False
    """A crash had cut the last line of ``runs.jsonl``; it was dropped on resume."""
    runs_failed: int
    scenarios: list[ScenarioSummary]
    statistics: StatisticsRecord | None = None
    """The statistics settings used (null in version-1 files)."""
    pooled: list[PooledRecord] = Field(default_factory=list)
    """Per challenger, one test across scenarios (rule 18); empty with a single scenario."""
    sequential: SequentialSummary | None = None
    """Sequential sweeps: the settings, how the arms stopped, and the runs saved."""
    rollup: list[RollupRecord] = Field(default_factory=list)
    """Each challenger across scenarios (every sweep; most useful with several scenarios)."""


BISECT_SCHEMA_VERSION: Literal[4] = 4
"""2 added ``decide``, ``confirmations`` and each probe's ``p_value``; 3 added ``status`` and
``failure``; 4 added ``search_complete``, ``culprit_checks``, ``unconfirmed_found``,
``standing`` and ``reasons``."""


class BisectProbeRecord(_Record):
    """One probe use of the culprit search."""

    ablated: list[str]
    """Ids ablated together, in set order; empty for the baseline probe."""
    samples: int
    flips: int
    flipped: bool
    """Majority rule; for the baseline probe, zero tolerance (any flip)."""
    similarity: SimilarityRecord | None
    cached: bool
    """Answered from the cache: no runs spent."""
    speculative: bool
    """Run ahead of need in speculative mode."""
    p_value: float | None = None
    """``decide: test``: the probe's paired test against the baseline probe."""
    n10: int | None = None
    """``decide: test``: seeds where the probe flipped and the baseline probe did not."""
    n01: int | None = None
    """``decide: test``: seeds where the baseline probe flipped and the probe did not."""


class ConfirmationRecord(_Record):
    """``decide: test``: a culprit set re-tested on fresh seeds before it is claimed."""

    culprit: list[str]
    first_seed: int
    """The fresh seeds are ``first_seed..first_seed+samples-1``."""
    n10: int
    n01: int
    p_value: float
    alpha: float
    """``statistics.alpha / max_culprits``."""
    confirmed: bool


class CulpritCheckRecord(_Record):
    """A culprit set's 1-minimality check: the set probed without each of its suspects."""

    culprit: list[str]
    one_minimal: bool
    """True when every one-smaller set was probed and none flipped; false when the budget (or a
    Ctrl-C) stopped the check first."""
    probes: list[list[str]]
    """The one-smaller sets probed (none flipped)."""
    shrunk_from: list[str] | None = None
    """The set ddmin returned first, when leaving a suspect out still flipped and it was shrunk."""


class BisectRecord(_Provenance):
    """``bisect.json``: the culprit search and its evidence."""

    schema_version: Literal[1, 2, 3, 4] = BISECT_SCHEMA_VERSION
    status: Literal["complete", "interrupted", "failed"] = "complete"
    """``failed`` when every run failed or the runner evidently cannot work (``failure``)."""
    failure: str | None = None
    decide: Literal["majority", "test"] = "majority"
    """How probes were decided (rule 10 majority, or rule 20 test)."""
    confirmations: list[ConfirmationRecord] = Field(default_factory=list)
    """``decide: test``: each culprit set's confirmation on fresh seeds."""
    scenario: str
    verdict: BisectVerdict
    """confirmed / not-reproducible / inconclusive."""
    reason: BisectReason
    claim: str
    """The result in words; its first sentence states the standing."""
    standing: Standing = "not-assessed"
    """``sure`` / ``not-sure``, or ``not-assessed`` for a search that ended without an answer
    (inconclusive)."""
    reasons: list[DoubtRecord] = Field(default_factory=list)
    """One entry per kind of doubt about the result."""
    culprits: list[list[str]]
    """Minimal culprit sets, in discovery order; empty unless confirmed. A budget that runs out
    (or a Ctrl-C) after some sets were found keeps them, with ``search_complete`` false."""
    search_complete: bool = True
    """False when the search for further sets did not finish (budget, or interrupted): the sets
    in ``culprits`` stand, and more may exist."""
    culprit_checks: list[CulpritCheckRecord] = Field(default_factory=list)
    """Per culprit set (same order): whether it is 1-minimal and the probes that showed it."""
    unconfirmed_found: list[list[str]] = Field(default_factory=list)
    """``decide: test``: sets the search found but could not confirm on fresh seeds (budget or
    Ctrl-C); not claimed."""
    suspects: list[str]
    """The ranked suspects searched."""
    probes: list[BisectProbeRecord]
    """Probe uses in execution order, baseline first."""
    runs_used: int
    """Runner calls actually made by this invocation, retries included."""
    runs_reused: int = 0
    """Runs read back from the run directory (a resumed search) or taken from the run cache
    are not in ``runs_used``; this counts the ones read back."""
    probes_executed: int
    """Probes that ran (cached uses excluded); counts against max_probes."""
    speculative: bool
    speculative_unused: int
    """Probes run ahead whose result the search never needed."""
    max_probes: int
    max_culprits: int
    samples: int
    comparator: str
    reference: ReferenceRecord
    wall_time_s: float
    """Wall time of the search, Ray start-up excluded."""
