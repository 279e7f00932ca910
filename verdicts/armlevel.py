"""One verdict per challenger over the whole question set (issue: the eval set is the unit).

Each challenger's tested rows (one per question) become one :class:`ArmVerdictRecord`: the
sign-flip test over questions of :mod:`counterfact.verdicts.stats.clustered` (valid whether a
question's seeds are independent draws or copies), adjusted over the challengers, with its
interval, the questions that moved each way, the effective sample, the seed-level stratified
McNemar test as a labelled secondary, and a standing. With one question the seeds are the
sample, and the row's own paired test is the arm's.

Pure: verdict rows in, records out.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from counterfact.records.arms import (
    ArmEffectRecord,
    ArmVerdictRecord,
    QuestionMoveRecord,
    StratifiedRecord,
)
from counterfact.records.parts import AdjustmentRecord, DoubtRecord
from counterfact.records.summary import PooledRecord, StatisticsRecord
from counterfact.records.verdicts import VerdictRecord
from counterfact.records.vocabulary import (
    Adjustment,
    Alternative,
    DoubtCode,
    Standing,
    StatisticalVerdict,
    Verdict,
)
from counterfact.verdicts.family import verdict_of
from counterfact.verdicts.stats.clustered import (
    ClusteredTest,
    QuestionCounts,
    clustered_test,
    hulled_interval,
    sign_flip_p,
)
from counterfact.verdicts.stats.multiplicity import adjust, best_factor
from counterfact.verdicts.stats.significance import effect_of_counts, mcnemar_exact
from counterfact.verdicts.wording.arms import ArmFacts, Rates, arm_line, disagreement, notes_for

NOTABLE = 5
"""Questions listed per direction in ``notable``."""
ROW_LEVEL_ONLY: frozenset[str] = frozenset(
    {
        "verdict-inconclusive",
        "test-underpowered",
        "tier-test-disagree",
        "no-test",
        "test-withheld",
        "sequential-cap",
        "runs-rate-limited",
    }
)
"""Row doubts about a question's own test: the arm-level test replaces them."""
METHOD = "sign-flip test over questions (exact), each question's seeds moved together"
ONE_QUESTION = "one question: paired exact test over its seeds (the seeds are the sample)"


def _counts(row: VerdictRecord) -> QuestionCounts | None:
    t = row.test
    if t is None:
        return None
    n11 = t.n11 if t.n11 is not None else 0
    return QuestionCounts(row.scenario, t.n10, t.n01, n11, t.pairs)


def _notable(counts: Sequence[QuestionCounts]) -> list[QuestionMoveRecord]:
    ranked = sorted(counts, key=lambda c: (-abs(c.moved), c.question))
    up = [c for c in ranked if c.moved > 0][:NOTABLE]
    down = [c for c in ranked if c.moved < 0][:NOTABLE]
    return [
        QuestionMoveRecord(question=c.question, moved=c.moved, pairs=c.pairs) for c in up + down
    ]


def _row_doubts(rows: Sequence[VerdictRecord]) -> list[DoubtRecord]:
    """The rows' own doubts that bear on the arm as a whole, counted over questions."""
    runs: dict[DoubtCode, int] = defaultdict(int)
    questions: dict[DoubtCode, set[str]] = defaultdict(set)
    at_least: dict[DoubtCode, bool] = defaultdict(bool)
    for row in rows:
        for reason in row.reasons:
            if reason.code in ROW_LEVEL_ONLY:
                continue
            runs[reason.code] += reason.count
            questions[reason.code].add(row.scenario)
            at_least[reason.code] |= reason.at_least
    return [
        DoubtRecord(
            code=code,
            count=runs[code],
            at_least=at_least[code],
            detail=f"on {len(questions[code])} of {len(rows)} question(s); each row's reasons "
            "name the seeds",
        )
        for code in sorted(runs)
    ]


SEQUENTIAL_NOTE = (
    "a sequential sweep stopped each question at seeds that depended on its own results: the "
    "arm-level p treats the stopped counts as fixed (approximate); the anytime-valid figure is "
    "the pooled e-value in summary.json"
)


def _sequential_note(rows: Sequence[VerdictRecord]) -> list[str]:
    return [SEQUENTIAL_NOTE] if any(r.sequential is not None for r in rows) else []


def _determinism_note(rows: Sequence[VerdictRecord]) -> list[str]:
    failed = sum(any(d.code == "placebo-not-deterministic" for d in r.reasons) for r in rows)
    if not failed:
        return []
    return [
        f"determinism check failed on {failed} question(s): the program is not controlled by "
        "its seed (see those rows' reasons)"
    ]


def _why_untested(rows: Sequence[VerdictRecord]) -> str:
    """``arm-not-applied on 40 of 40 questions``: the commonest reason of the untested rows."""
    reasons = Counter(str(r.reason) for r in rows if r.test is None and r.reason is not None)
    if not reasons:
        return ""
    reason, count = reasons.most_common(1)[0]
    return f"{reason} on {count} of {len(rows)} question(s)"


def _tier(verdict: StatisticalVerdict | None) -> Verdict:
    if verdict == "significant":
        return "confirmed"
    if verdict == "not-significant":
        return "not-confirmed"
    return "inconclusive"


def _test_doubts(
    test: ClusteredTest | None, verdict: StatisticalVerdict | None, withheld: int
) -> list[DoubtRecord]:
    out = []
    if verdict is None or verdict == "underpowered":
        out.append(
            DoubtRecord(
                code="verdict-inconclusive",
                count=1,
                detail="no question could be tested"
                if verdict is None
                else "too few questions for any outcome to reach alpha once adjusted",
            )
        )
    if withheld:
        out.append(
            DoubtRecord(
                code="questions-withheld",
                count=withheld,
                detail="questions left out of the test (the arm or the baseline did not take "
                "effect there, or nothing could be scored)",
            )
        )
    return out


def _never_sure(reasons: list[DoubtRecord]) -> list[DoubtRecord]:
    """An inconclusive verdict is never sure (rule 25): its first reason says so."""
    if any(r.code == "verdict-inconclusive" for r in reasons):
        return reasons
    first = DoubtRecord(
        code="verdict-inconclusive", count=1, detail="the verdict is inconclusive: not yet"
    )
    return [first, *reasons]


@dataclass(frozen=True)
class _Judged:
    """One challenger's test over its questions, adjusted over the challengers."""

    test: ClusteredTest | None
    p_adjusted: float | None
    adjustment: AdjustmentRecord | None
    verdict: StatisticalVerdict | None
    tier: Verdict
    stratified: StratifiedRecord | None
    withheld: int
    alternative: Alternative
    alpha: float = 0.05


def _rates(
    counts: Sequence[QuestionCounts], j: _Judged, rows: Sequence[VerdictRecord] = ()
) -> Rates | None:
    """Each side's flips on the tested pairs, and the one-sided test's other direction."""
    t = j.test
    if t is None:
        return None
    other: float | None = None
    if j.alternative != "two-sided":
        opposite: Alternative = "less" if j.alternative == "greater" else "greater"
        if t.seeds_are_sample and len(counts) == 1:
            (c,) = counts
            other = mcnemar_exact(c.n10, c.n01, opposite)  # the row's own test, the other way
        else:
            other = sign_flip_p([c.moved for c in counts], opposite)[0]
    return Rates(
        flips=sum(c.n11 + c.n10 for c in counts),
        baseline_flips=sum(c.n11 + c.n01 for c in counts),
        pairs=sum(c.pairs for c in counts),
        alternative=j.alternative,
        alpha=j.alpha,
        other_way_p=other,
        arm_seeds_vary=any(0 < c.n11 + c.n10 < c.pairs for c in counts if c.pairs > 1),
        same_outputs=_same_outputs(rows),
    )


def _same_outputs(rows: Sequence[VerdictRecord]) -> bool | None:
    """Every row's outputs equal the baseline's (None: no row could tell)."""
    known = [r.outputs_as_baseline for r in rows if r.outputs_as_baseline is not None]
    return all(known) if known else None


def _agrees(j: _Judged) -> bool | None:
    """The interval leaves out 0 on the tested side exactly when the test is significant:
    ``greater`` iff its low end is above 0, ``less`` iff its high end is below 0, two-sided iff
    it excludes 0 (None: no decision).
    """
    t = j.test
    if t is None or j.verdict not in ("significant", "not-significant"):
        return None
    if j.alternative == "greater":
        excludes = t.low > 0
    elif j.alternative == "less":
        excludes = t.high < 0
    else:
        excludes = t.low > 0 or t.high < 0
    return bool(excludes == (j.verdict == "significant"))


def _effect(t: ClusteredTest) -> ArmEffectRecord:
    method = (
        "Newcombe paired (method 10), the row's own"
        if t.seeds_are_sample
        else "sign-flip score interval over questions"
    )
    return ArmEffectRecord(
        diff=t.diff, low=float(t.low), high=float(t.high), level=t.level, method=method
    )


def _one(
    arm: str, rows: Sequence[VerdictRecord], counts: Sequence[QuestionCounts], j: _Judged
) -> ArmVerdictRecord:
    t = j.test
    agrees = _agrees(j)
    if t is not None and t.seeds_are_sample:
        reasons = list(rows[0].reasons)  # the row's test is the arm's: so are its doubts
    else:
        reasons = _test_doubts(t, j.verdict, j.withheld) + _row_doubts(rows)
    if t is not None and j.tier == "inconclusive":
        reasons = _never_sure(reasons)
    if agrees is False:
        reasons.append(
            DoubtRecord(
                code="interval-test-disagree",
                count=1,
                detail=disagreement(t),
            )
        )
    standing: Standing = "not-assessed" if t is None else ("not-sure" if reasons else "sure")
    facts = ArmFacts(
        arm,
        j.tier,
        j.verdict,
        t,
        j.p_adjusted,
        standing,
        len(reasons),
        agrees,
        j.stratified,
        j.withheld,
        _why_untested(rows) if t is None else "",
        rates := _rates(counts, j, rows),
    )
    return ArmVerdictRecord(
        arm=arm,
        intervention=rows[0].intervention,
        verdict=j.tier,
        statistical_verdict=j.verdict,
        alternative=j.alternative,
        method=_method(t),
        questions=t.questions if t else 0,
        questions_withheld=j.withheld,
        questions_up=t.up if t else 0,
        questions_down=t.down if t else 0,
        pairs=t.pairs if t else 0,
        effective_pairs=t.effective_pairs if t else 0.0,
        seeds_vary=t.seeds_vary if t else True,
        statistic=t.statistic if t else 0,
        flips=rates.flips if rates else None,
        baseline_flips=rates.baseline_flips if rates else None,
        other_way_p=rates.other_way_p if rates else None,
        arm_seeds_vary=rates.arm_seeds_vary if rates else None,
        outputs_as_baseline=rates.same_outputs if rates else None,
        p_value=t.p_value if t else None,
        p_adjusted=j.p_adjusted,
        adjustment=j.adjustment,
        min_attainable_p=t.min_attainable_p if t else None,
        effect=_effect(t) if t else None,
        interval_agrees=agrees,
        stratified=j.stratified,
        notable=_notable(counts),
        notes=notes_for(facts) + _sequential_note(rows) + _determinism_note(rows),
        standing=standing,
        reasons=reasons,
        summary=arm_line(facts),
    )


def adjusted_alpha(
    alpha: float, p: float, p_adjusted: float, method: Adjustment, size: int
) -> float:
    """The level the interval is built at so that it agrees with the adjusted test: ``alpha /
    c`` with ``c = p_adjusted / p``, the factor the adjustment applied to this challenger's p
    (Holm's step-down factor; at most the family size, ``size`` times the harmonic sum for BY),
    and the largest factor when the adjusted p is capped at 1. Then ``p <= alpha / c`` exactly
    when ``p_adjusted <= alpha``.
    """
    cap = 1.0 if method == "none" else size * (best_factor(method, size) if method == "by" else 1)
    if p <= 0 or p_adjusted >= 1:
        return alpha / max(1.0, cap)
    return alpha / min(max(1.0, cap), max(1.0, p_adjusted / p))


def _interval_at(
    test: ClusteredTest,
    counts: Sequence[QuestionCounts],
    alternative: Alternative,
    alpha: float,
) -> ClusteredTest:
    """The test with its interval rebuilt at ``alpha`` (the multiplicity-adjusted level)."""
    if test.seeds_are_sample:
        (c,) = counts
        level = 1 - alpha if alternative == "two-sided" else 1 - 2 * alpha
        e = effect_of_counts(c.n10, c.n01, c.n11, c.pairs, level)
        if e is None:
            return test
        return dataclasses.replace(test, low=e.low, high=e.high, level=level)
    low, high, level = hulled_interval(counts, alternative, alpha, test.seeds_vary)
    return dataclasses.replace(test, low=low, high=high, level=level)


def _single_test(row: VerdictRecord) -> ClusteredTest | None:
    """One question: the row's paired test and interval (its seeds are the sample)."""
    t, c = row.test, _counts(row)
    if t is None or c is None or t.pairs == 0:
        return None
    e = row.effect
    return ClusteredTest(
        questions=1,
        pairs=t.pairs,
        statistic=c.moved,
        diff=c.moved / t.pairs,
        p_value=t.p_value,
        min_attainable_p=t.min_attainable_p,
        low=e.low if e else -1.0,
        high=e.high if e else 1.0,
        level=e.level if e else 0.95,
        effective_pairs=float(t.pairs),
        seeds_vary=not c.constant,
        up=int(c.moved > 0),
        down=int(c.moved < 0),
        exact=True,
        seeds_are_sample=True,
    )


def _stratified(
    pooled: PooledRecord | None, verdict: StatisticalVerdict | None
) -> StratifiedRecord | None:
    if pooled is None or pooled.e_value is not None:
        return None
    return StratifiedRecord(
        p_value=pooled.p_value,
        p_adjusted=pooled.p_adjusted,
        secondary_reading=pooled.secondary_reading,
        disagrees=(pooled.secondary_reading == "significant") != (verdict == "significant"),
    )


def _tested(rows: Sequence[VerdictRecord]) -> list[VerdictRecord]:
    return [r for r in rows if r.test is not None and r.test.pairs > 0]


def _method(t: ClusteredTest | None) -> str:
    if t is not None and t.seeds_are_sample:
        return ONE_QUESTION
    return METHOD if t is None or t.exact else METHOD.replace("(exact)", "(normal tail)")


def _test_of(
    tested: Sequence[VerdictRecord],
    counts: Sequence[QuestionCounts],
    settings: StatisticsRecord,
    one_question: bool,
) -> ClusteredTest | None:
    if one_question and len(tested) == 1:
        return _single_test(tested[0])
    return clustered_test(counts, settings.alternative, settings.alpha)


def arm_verdicts(
    rows: Sequence[VerdictRecord],
    settings: StatisticsRecord,
    pooled: Sequence[PooledRecord] = (),
) -> list[ArmVerdictRecord]:
    """One record per challenger, in the order the challengers first appear in ``rows``.

    With one tested question the row's own verdict, test and doubts are the arm's (its seeds
    are the sample, and the row was adjusted over the same challengers); an inconclusive arm is
    never sure (rule 25).
    """
    rows_of: dict[str, list[VerdictRecord]] = defaultdict(list)
    for row in rows:
        if not row.is_baseline:
            rows_of[row.arm].append(row)
    tested_of = {arm: _tested(mine) for arm, mine in rows_of.items()}
    counts_of = {
        arm: [c for c in (_counts(r) for r in tested) if c is not None]
        for arm, tested in tested_of.items()
    }
    one_question = len({r.scenario for r in rows}) == 1
    tests = {
        arm: _test_of(tested_of[arm], counts_of[arm], settings, one_question) for arm in rows_of
    }
    present = [a for a, t in tests.items() if t is not None]
    adjusted = adjust([t.p_value for t in tests.values() if t is not None], settings.adjust)
    p_adj = dict(zip(present, adjusted, strict=True))
    note = AdjustmentRecord(method=settings.adjust, family="sweep", family_size=len(present))
    factor = best_factor(settings.adjust, len(present))
    by_arm = {p.arm: p for p in pooled}
    out = []
    for arm, mine in rows_of.items():
        test = tests[arm]
        tested = tested_of[arm]
        if test is not None:
            level = adjusted_alpha(
                settings.alpha, test.p_value, p_adj[arm], settings.adjust, len(present)
            )
            test = _interval_at(test, counts_of[arm], settings.alternative, level)
        verdict: StatisticalVerdict | None = None
        tier: Verdict = "inconclusive"
        if test is not None and test.seeds_are_sample:
            verdict = tested[0].statistical_verdict
            tier = tested[0].verdict or "inconclusive"
        elif test is not None:
            verdict = verdict_of(test.min_attainable_p, p_adj[arm], settings.alpha, factor)
            tier = _tier(verdict)
        judged = _Judged(
            test=test,
            p_adjusted=p_adj.get(arm),
            adjustment=note if test is not None else None,
            verdict=verdict,
            tier=tier,
            stratified=_stratified(by_arm.get(arm), verdict),
            withheld=len(mine) - len(tested),
            alternative=settings.alternative,
            alpha=settings.alpha,
        )
        out.append(_one(arm, mine, counts_of[arm], judged))
    return out
