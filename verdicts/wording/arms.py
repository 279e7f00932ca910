"""The arm-level verdict in words: its console line and its notes."""

from __future__ import annotations

from dataclasses import dataclass

from counterfact.records.arms import StratifiedRecord
from counterfact.records.vocabulary import Standing, StatisticalVerdict, Verdict
from counterfact.verdicts.stats.clustered import ClusteredTest


@dataclass(frozen=True)
class ArmFacts:
    """What the line and the notes are made from."""

    arm: str
    verdict: Verdict
    statistical_verdict: StatisticalVerdict | None
    test: ClusteredTest | None
    p_adjusted: float | None
    standing: Standing
    doubts: int
    interval_agrees: bool | None
    stratified: StratifiedRecord | None
    withheld: int
    why_untested: str = ""
    """The commonest reason of the rows that had no test (``arm-not-applied on 40 of 40``)."""
    rates: Rates | None = None
    """The arm's and the baseline's flips on the tested pairs, and the test's other side."""


@dataclass(frozen=True)
class Rates:
    """What a reader looks for first: each side's flip rate, and which way the arm moved."""

    flips: int
    baseline_flips: int
    pairs: int
    alternative: str
    alpha: float
    other_way_p: float | None
    """The one-sided test's p in the other direction (None for a two-sided test)."""
    arm_seeds_vary: bool
    same_outputs: bool | None = None
    """Every tested question's outputs equal the baseline's on every seed both ran."""


P_FLOOR = 1e-40
"""Below this a p is printed as a bound: far tails come from a normal approximation and can be
off by orders of magnitude."""


def _p(p: float) -> str:
    if p < P_FLOOR:
        return f"< {P_FLOOR:.0e}"
    return f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}"


def _share(k: int, n: int) -> str:
    return f"{k:,}/{n:,} ({k / n:.0%})" if n else f"{k}/{n}"


def _moves(f: ArmFacts, t: ClusteredTest) -> str:
    """``breaks 5 question(s), fixes 0 of 5; flips 36/40 (90%) vs the baseline's 1/40 (2%)``."""
    words = f"breaks {t.up} question(s), fixes {t.down} of {t.questions}"
    r = f.rates
    if r is None:
        return words
    return (
        f"{words}; flips {_share(r.flips, r.pairs)} vs the baseline's "
        f"{_share(r.baseline_flips, r.pairs)}"
    )


def arm_line(f: ArmFacts) -> str:
    """``arm: verdict — effect [low, high], p, up/down of questions; standing``."""
    t = f.test
    if t is None:
        why = f" ({f.why_untested})" if f.why_untested else ""
        return f"{f.arm}: inconclusive — no question could be tested{why}; not assessed"
    test = f.statistical_verdict or "untested"
    adj = f", adjusted {_p(f.p_adjusted)}" if f.p_adjusted is not None else ""
    standing = f.standing if f.standing != "not-sure" else f"not-sure ({f.doubts})"
    return (
        f"{f.arm}: {f.verdict} ({test}) — {_moves(f, t)}; effect {t.diff:+.3f} "
        f"[{t.low:+.3f}, {t.high:+.3f}] ({t.level:.0%}), p {_p(t.p_value)}{adj}; effective "
        f"pairs {t.effective_pairs:,.0f} of {t.pairs:,}; {standing}"
    )


def disagreement(t: ClusteredTest | None) -> str:
    """Why the interval and the adjusted test disagree, where they can: both are at the level
    adjusted over the challengers, so the cause is the interval's own method.
    """
    if t is not None and t.seeds_are_sample:
        return (
            "Newcombe's interval over the question's seeds and its exact McNemar test disagree "
            "(two methods, both at the level adjusted over the challengers): the exact p decides"
        )
    return (
        "the interval and the exact test disagree (the interval takes the exact test's critical "
        "value at the adjusted level, so only a p at alpha to rounding can): the exact p decides"
    )


def notes_for(f: ArmFacts) -> list[str]:
    """What a reader must know beside the line."""
    t = f.test
    if t is None:
        return []
    out = []
    if t.seeds_are_sample:
        out.append(
            "one question: the verdict is about this question, its seeds are the sample "
            "(they are assumed to be independent draws)"
        )
    elif not t.seeds_vary:
        out.append(
            f"answers never vary within a question: the {t.questions} questions are the "
            f"sample (effective pairs {t.effective_pairs:.0f} of {t.pairs}); more seeds add "
            "nothing, more questions do"
        )
    elif t.effective_pairs < 0.5 * t.pairs:
        out.append(
            f"a question's seeds agree with each other more than independent draws would: "
            f"effective pairs {t.effective_pairs:.0f} of {t.pairs}"
        )
    if f.interval_agrees is False:
        out.append(disagreement(t))
    s = f.stratified
    if s is not None and s.disagrees:
        out.append(
            f"the seed-level stratified test (secondary) is {s.secondary_reading} "
            f"(adjusted p {_p(s.p_adjusted)}): it counts every seed pair as independent, so it "
            "is not the verdict"
        )
    if f.withheld:
        out.append(f"{f.withheld} question(s) left out of the test (see their rows)")
    return out + _rate_notes(f, t)


def _rate_notes(f: ArmFacts, t: ClusteredTest) -> list[str]:
    """An effect the one-sided test cannot see, and an arm whose seeds never vary."""
    r = f.rates
    if r is None:
        return []
    out = []
    if r.other_way_p is not None and r.other_way_p <= r.alpha:
        fixes = r.alternative == "greater"
        way, looked = ("fixes", "breaks") if fixes else ("breaks", "fixes")
        out.append(
            f"the arm {way} more than it {looked}: {t.down if fixes else t.up} question(s) "
            f"{'fixed' if fixes else 'broken'}, {t.up if fixes else t.down} "
            f"{'broken' if fixes else 'fixed'}, p {_p(r.other_way_p)} that way, unadjusted "
            f"(two-sided {_p(min(1.0, 2 * r.other_way_p))}); the sweep's test "
            f"({r.alternative}) looks only for {looked}: statistics.alternative two-sided tests "
            "both, adjusted over the challengers"
        )
    if not r.arm_seeds_vary and t.seeds_vary and r.pairs > t.questions:
        out.append(
            "the arm's answers never vary across a question's seeds (temperature 0, or a "
            "cache): its seeds repeat one run each"
        )
    if r.same_outputs:
        out.append(
            "the arm's outputs equal the baseline's on every seed of every question: it "
            "changed nothing the model saw (did the change reach it? a server may drop a "
            "field it does not know: check the manifests)"
        )
    elif r.flips == r.baseline_flips and t.up == 0 and t.down == 0 and r.pairs:
        out.append(
            "on every seed the arm was judged exactly as the baseline was: it changed no "
            "outcome (if it should have, check that the change reached the model: manifests)"
        )
    return out
