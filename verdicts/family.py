"""The statistical verdict over a family of tests (rules 15 and 18), and its words.

Each challenger's judgement arrives with its raw test
(:mod:`counterfact.verdicts.stats.significance`). Here the p-values are adjusted over the declared
family — every (scenario, challenger) test of the sweep (``family: sweep``) or each scenario's
(``family: scenario``) — and the statistical verdict is decided; :func:`test_sentence` states the
test in plain words beside the tier (so that a ``confirmed`` tier never reads as significance),
joined to the claim in :mod:`counterfact.verdicts.rows`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from counterfact.records.parts import AdjustmentRecord, TestRecord
from counterfact.records.summary import PooledRecord, StatisticsRecord
from counterfact.records.verdicts import VerdictRecord
from counterfact.records.vocabulary import Adjustment, StatisticalVerdict
from counterfact.verdicts.judgement import Adjusted, Judgement
from counterfact.verdicts.stats.multiplicity import adjust, best_factor
from counterfact.verdicts.stats.pooled import pooled_effect_record
from counterfact.verdicts.stats.sequential import pairs_needed as e_pairs_needed
from counterfact.verdicts.stats.significance import (
    at_most,
    floor_of,
    mcnemar_exact,
    pairs_needed,
)

_ADJUSTED_BY = {"holm": "Holm", "bh": "Benjamini-Hochberg", "by": "Benjamini-Yekutieli"}


def verdict_of(
    min_attainable_p: float, p_adjusted: float, alpha: float, factor: float = 1.0
) -> StatisticalVerdict:
    """``underpowered`` when no outcome could reach ``alpha`` once adjusted (``factor`` times
    the smallest attainable p); else by the adjusted p.
    """
    if not at_most(factor * min_attainable_p, alpha):
        return "underpowered"
    return "significant" if at_most(p_adjusted, alpha) else "not-significant"


def adjust_family(
    judgements: Sequence[Judgement], settings: StatisticsRecord
) -> list[Adjusted | None]:
    """Each tested row's adjusted p and statistical verdict over its family (None: untested)."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, j in enumerate(judgements):
        if j.test is not None:
            groups[j.scenario if settings.family == "scenario" else ""].append(i)
    out: list[Adjusted | None] = [None] * len(judgements)
    for members in groups.values():
        tests = [t for t in (judgements[i].test for i in members) if t is not None]
        adjusted = adjust([t.p_value for t in tests], settings.adjust)
        note = AdjustmentRecord(
            method=settings.adjust, family=settings.family, family_size=len(members)
        )
        factor = best_factor(settings.adjust, len(members))
        for i, test, p_adj in zip(members, tests, adjusted, strict=True):
            verdict = verdict_of(test.min_attainable_p, p_adj, settings.alpha, factor)
            out[i] = Adjusted(p_adjusted=p_adj, adjustment=note, verdict=verdict)
    return out


def samples_needed(test: TestRecord, alpha: float, adjust: Adjustment) -> int:
    """The fewest samples at which some outcome of this test could reach ``alpha`` once adjusted
    over its family (what an ``underpowered`` test lacks).
    """
    size = test.adjustment.family_size if test.adjustment else 1
    factor = best_factor(adjust, size)
    if test.e_value is not None:
        return e_pairs_needed(alpha, factor, test.alternative) + test.pairs_excluded
    return pairs_needed(alpha, test.pairing, factor, test.alternative) + test.pairs_excluded


def test_sentence(test: TestRecord, verdict: StatisticalVerdict, s: StatisticsRecord) -> str:
    """The test in plain words: what it counted, its p, the adjustment, the verdict."""
    seed0 = " (seed 0 left out: it is the reference)" if test.pairs_excluded else ""
    if verdict == "underpowered":
        size = test.adjustment.family_size if test.adjustment else 1
        factor = best_factor(s.adjust, size)
        needed = samples_needed(test, s.alpha, s.adjust)
        over = f" once adjusted over {size} tests" if factor > 1 else ""
        return (
            f"Statistical test: underpowered — at {test.pairs} paired samples{seed0} no outcome "
            f"can reach p ≤ {s.alpha:g}{over}; {needed} samples can."
        )
    if test.e_value is not None:
        what = (
            f"anytime-valid sequential test{seed0}: {_discordant(test)}, e-value {test.e_value:.3g}"
        )
    elif test.pairing == "seed":
        what = f"paired exact test{seed0}: {_discordant(test)}"
    else:
        what = f"unpaired exact test over {test.pairs} runs each{seed0}"
    size = test.adjustment.family_size if test.adjustment else 1
    adjusted = ""
    if s.adjust != "none" and size > 1 and test.p_adjusted is not None:
        adjusted = f", {_ADJUSTED_BY[s.adjust]}-adjusted over {size} tests {test.p_adjusted:.3g}"
    outcome = "significant" if verdict == "significant" else "not significant"
    p = "p ≤ 1/e = " if test.e_value is not None else "p = "
    return f"Statistical test: {what}, {p}{test.p_value:.3g}{adjusted} — {outcome} at {s.alpha:g}."


def _discordant(test: TestRecord) -> str:
    """The discordant pairs, counted the way the test looks."""
    n = test.n10 + test.n01
    if test.alternative == "less":
        return (
            f"{test.n01} of {n} discordant seeds went the arm's way (the baseline flipped, it held)"
        )
    if test.alternative == "two-sided":
        return f"{test.n10} of {n} discordant seeds flipped only on the arm (two-sided)"
    return f"{test.n10} of {n} discordant seeds went the arm's way"


def pooled(rows: Sequence[VerdictRecord], settings: StatisticsRecord) -> list[PooledRecord]:
    """Rule 18: per challenger, summed discordant counts over its scenarios, one exact McNemar
    test each, Holm-style adjusted (``settings.adjust``) over the challengers.
    """
    rows_of: dict[str, list[VerdictRecord]] = defaultdict(list)
    for row in rows:
        if row.test is not None and row.test.pairing == "seed":
            rows_of[row.arm].append(row)
    by_arm = {a: [r.test for r in mine if r.test is not None] for a, mine in rows_of.items()}
    if not by_arm or max(len(t) for t in by_arm.values()) < 2:
        return []
    arms = sorted(by_arm)
    n10 = [sum(t.n10 for t in by_arm[a]) for a in arms]
    n01 = [sum(t.n01 for t in by_arm[a]) for a in arms]
    pairs = [sum(t.pairs for t in by_arm[a]) for a in arms]
    p = [mcnemar_exact(x, y, settings.alternative) for x, y in zip(n10, n01, strict=True)]
    p_adj = adjust(p, settings.adjust)
    return [
        PooledRecord(
            arm=a,
            scenarios=len(by_arm[a]),
            n10=n10[i],
            n01=n01[i],
            pairs=pairs[i],
            p_value=p[i],
            p_adjusted=p_adj[i],
            secondary_reading=verdict_of(
                floor_of(pairs[i], "seed", settings.alternative),
                p_adj[i],
                settings.alpha,
                best_factor(settings.adjust, len(arms)),
            ),
            effect=pooled_effect_record(rows_of[a]),
        )
        for i, a in enumerate(arms)
    ]
