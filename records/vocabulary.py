"""The words records use: every status, verdict, reason and setting that is a closed set.

Defined once here, on the ground floor, so a tool that loads a record needs neither numpy nor
scipy; the modules that decide these values (``verdicts.tiers``, ``verdicts.bisect.search`` ...)
import them from here.
"""

from __future__ import annotations

from typing import Literal

Verdict = Literal["confirmed", "not-confirmed", "inconclusive"]
"""The three tiers of a challenger row (rule 7)."""

Reason = Literal[
    "runs-failed",
    "runs-missing",
    "unstable-baseline",
    "baseline-not-applied",
    "baseline-facet-not-reported",
    "arm-not-applied",
    "arm-facet-not-reported",
    "inside-null-band",
    "majority-flip",
    "minority-flip",
    "no-flip",
    "test-significant",
    "test-not-significant",
    "test-rules-out-effect",
    "test-inconclusive",
    "test-underpowered",
]
"""Why a row got its verdict: the tier's reasons in refusal order (rule 7; ``runs-failed``: runs
of the arm or its baseline ran and failed; ``runs-missing``: none failed, but some seeds were
never run — the sweep stopped scheduling first; ``*-not-applied``: a
manifest reported another value for a declared facet, ``*-facet-not-reported``: the manifests
left a declared facet out, so whether it took effect cannot be checked), then, under
``statistics.decide: test``, the test's (``test-significant``: confirmed; ``test-not-significant``
and ``test-rules-out-effect``: not confirmed; ``test-inconclusive``: not significant but the
declared minimal effect is not ruled out; ``test-underpowered``: no outcome could reach alpha)."""

Alternative = Literal["greater", "less", "two-sided"]
"""Which way a test looks: ``greater`` (the arm flips more than the baseline: a break),
``less`` (the arm flips less: a fix, with the correct answer as the reference), ``two-sided``."""

Decider = Literal["tiers", "test"]
"""What decides a row's headline verdict: the seed tiers (rule 7) or the adjusted test."""

BisectVerdict = Literal["confirmed", "not-reproducible", "inconclusive"]
"""What a culprit search concluded (rule 10)."""

BisectReason = Literal[
    "culprits-found",
    "unconfirmed",
    "not-reproducible",
    "unstable-baseline",
    "budget-exhausted",
    "spend-exhausted",
    "runs-failed",
    "interrupted",
    "baseline-not-applied",
    "baseline-facet-not-reported",
    "underpowered",
]
"""Why a culprit search ended as it did (``baseline-not-applied``: a probe's manifest reported
another value for a facet the baseline declares; ``baseline-facet-not-reported``: the manifests
left one out; either stops the search, as in a sweep it withholds every verdict, rule 6;
``underpowered``: under ``decide: test``, no outcome at these samples could reach alpha, in a
probe's test or in a set's confirmation, so nothing was run; ``budget-exhausted``: the probe
budget, ``bisect.max_probes``, ran out; ``spend-exhausted``: the spend ``budget`` stopped the
search's runs)."""

CostClass = Literal["both", "content-bug", "cost-cause", "no-detected-effect"]
"""What an ablation did to the cost it removed (rule 11)."""

Adjustment = Literal["holm", "bh", "by", "none"]
"""Multiplicity adjustment over the family (rule 15)."""

StoppedFor = Literal["significant", "futile", "max-samples", "untestable"]
"""Why a sequential arm stopped sampling (rule 19)."""

Pairing = Literal["seed", "none"]
"""How seeds pair in the test (rule 14)."""

StatisticalVerdict = Literal["significant", "not-significant", "underpowered"]
"""The test beside the tier (rule 14)."""

InterventionKind = Literal[
    "baseline", "substitution", "ablation", "restoration", "mixed", "placebo"
]
"""What an arm changes relative to the baseline (rule 9)."""

Family = Literal["sweep", "scenario"]
"""The family p-values are adjusted over (rule 15)."""

ExecutorChosen = Literal["explicit", "api-bound default", "cpu default", "address", "ray options"]
"""Why a sweep ran on its executor: ``explicit`` (``executor.kind`` or ``--executor`` named it);
``api-bound default`` (no kind, no address, an ``async def`` runner or ``executor.concurrency``:
in-process); ``cpu default`` (no kind, no address, a sync runner without ``concurrency``: Ray);
``address`` (no kind, a cluster address in ``executor.address`` / ``--address`` or
``RAY_ADDRESS``: Ray); ``ray options`` (an API-bound sweep without a kind that sets options only
Ray honours, such as ``num_cpus``: Ray)."""

Standing = Literal["sure", "not-sure", "not-assessed"]
"""How sure a verdict is (rule 25): ``sure`` when every check that bears on it ran and passed;
``not-sure`` with one reason per kind of doubt; ``not-assessed`` for a record with no answer (a
baseline row, a row without a successful run, a search that ended without a result)."""

DoubtCode = Literal[
    "verdict-inconclusive",
    "runs-failed",
    "runs-missing",
    "runs-retried",
    "runs-rate-limited",
    "runs-from-cache",
    "runs-lost-workers",
    "text-escaped",
    "manifests-missing",
    "manifest-unchecked",
    "facet-not-reported",
    "reference-is-seed0",
    "text-level-comparator",
    "no-test",
    "test-withheld",
    "test-underpowered",
    "tier-test-disagree",
    "sequential-cap",
    "search-incomplete",
    "minimality-unchecked",
    "minimality-unconfirmed",
    "probe-runs-failed",
    "questions-withheld",
    "interval-test-disagree",
    "placebo-not-deterministic",
    "comparison-timed-out",
    "noise-unmeasured",
    "judge-unparseable",
    "judge-unavailable",
]
"""One kind of doubt about a verdict (a :class:`~counterfact.records.parts.DoubtRecord`).
``runs-rate-limited`` is no longer given (a run that waited on a rate limit and then ran is not
in doubt; ``summary.json`` counts it in ``runs_rate_limited``): it stays so older records load.
``minimality-unconfirmed``: under ``decide: test``, a held set's one-smaller sets were not
re-probed on fresh seeds, or one flipped there. ``placebo-not-deterministic``: a
``placebo: true`` arm (the baseline's configuration on its own seeds) was judged differently
from the baseline on the same seed — the determinism check failed. ``comparison-timed-out``: the
comparator could not judge some outputs within its deadline (a regex that backtracks on them);
those seeds are unscored, as failed runs are. ``judge-unparseable``: a model judge's reply on
some outputs was not a verdict; ``judge-unavailable``: a model judge refused some outputs, or
stayed down through its retries (a record written before these two holds an unparseable reply
as ``comparison-timed-out``); either way those seeds are unscored, as failed runs
are, and never flips. ``noise-unmeasured``: a culprit search under
``decide: majority`` had probes whose seeds split (the answers vary by seed), and the majority
rule does not test a flip against that noise."""
