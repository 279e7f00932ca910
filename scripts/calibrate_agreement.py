"""Agreement of the arm-level interval with the arm-level test (issue 43 items 2 and 5): how often
"the interval leaves out 0" and "the adjusted test is significant" say the same thing, by the
number of questions, before and after the interval took the exact test's critical value and the
level the adjustment over the challengers applies. Every rate with its Clopper-Pearson 95%
interval.

Each simulated sweep has Q questions at 5 seeds and three challengers judged together (Holm,
``greater``, alpha 0.05); question q has its own baseline flip rate (uniform on 0.05-0.6). The
first challenger's flip rate is the baseline's plus ``effect``, the other two are A/A. A question's
seeds are independent draws or identical copies (one draw per question and arm, repeated). Only
the first challenger is scored:

- *before*: the score interval at the normal quantile and the unadjusted level, hulled with
  Newcombe's intervals (the interval as it was before issue 43, except where the score
  quadratic opens downward: the old code took all of [-1, 1] there, this takes the ray that
  holds the estimate, and both leave in 0 when the test does not reject);
- *after*: counterfact's own (``verdicts.stats.clustered.hulled_interval`` at
  ``verdicts.armlevel.adjusted_alpha``), as ``arms.jsonl`` records it;
- *covers*: the share of *after* intervals that hold the true effect (0 for A/A); their level is
  1 - 2 alpha / c, 90% to 96.7% here.

Writes its section of ``docs/statistics.md`` (between ``<!-- agreement:start -->`` and
``<!-- agreement:end -->``), leaving the rest of the file as it is.

    python scripts/calibrate_agreement.py [--sweeps 1000] [--out docs/statistics.md]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from calibrate_evalset import simulate
from docsection import replace_section
from rates import ALPHA, Rate
from scipy.integrate import quad
from scipy.stats import binom

from counterfact.verdicts.armlevel import adjusted_alpha
from counterfact.verdicts.family import verdict_of
from counterfact.verdicts.stats.clustered import (
    QuestionCounts,
    clustered_test,
    hulled_interval,
    score_interval,
)
from counterfact.verdicts.stats.multiplicity import adjust, best_factor
from counterfact.verdicts.stats.significance import effect_of_counts

ROOT = Path(__file__).resolve().parent.parent
START, END = "<!-- agreement:start -->", "<!-- agreement:end -->"
CHALLENGERS = 3
SEEDS = 5
QUESTIONS = (6, 10, 20, 50)
"""6: the fewest at which Holm over 3 can reach 0.05 (3 / 2^6 = 0.047)."""
CELLS = (("independent", 0.0), ("copies", 0.0), ("independent", 0.3), ("copies", 0.3))


def before(counts: list[QuestionCounts], seeds_vary: bool) -> tuple[float, float]:
    """The interval as it was: normal quantile, unadjusted level, hulls across 0 allowed."""
    low, high, level = score_interval(counts, "greater", ALPHA)
    sums = (sum(c.n10 for c in counts), sum(c.n01 for c in counts), sum(c.n11 for c in counts))
    hulls = [effect_of_counts(*sums, sum(c.pairs for c in counts), level)]
    if not seeds_vary:
        up, down = sum(c.moved > 0 for c in counts), sum(c.moved < 0 for c in counts)
        both = sum(c.n11 == c.pairs > 0 for c in counts)
        hulls.append(effect_of_counts(up, down, both, len(counts), level))
    for e in hulls:
        if e is not None:
            low, high = min(low, e.low), max(high, e.high)
    return low, high


def one_sweep(
    rng: np.random.Generator, questions: int, dependence: str, effect: float
) -> tuple[bool, bool, bool] | None:
    """(before agrees, after agrees, after covers the effect) for the first challenger; None
    when its test is underpowered (no decision to agree with).
    """
    sets = [
        simulate(rng, questions, SEEDS, effect if i == 0 else 0.0, dependence) for i in range(3)
    ]
    tests = [clustered_test(c, "greater", ALPHA) for c in sets]
    assert all(t is not None for t in tests)
    p = [t.p_value for t in tests if t is not None]
    p_adj = adjust(p, "holm")
    first = tests[0]
    assert first is not None
    verdict = verdict_of(first.min_attainable_p, p_adj[0], ALPHA, best_factor("holm", 3))
    if verdict == "underpowered":
        return None
    significant = verdict == "significant"
    old_low, _ = before(sets[0], first.seeds_vary)
    level = adjusted_alpha(ALPHA, p[0], p_adj[0], "holm", CHALLENGERS)
    low, high, _ = hulled_interval(sets[0], "greater", level, first.seeds_vary)
    return (old_low > 0) == significant, (low > 0) == significant, low <= effect <= high


def cell(sweeps: int, questions: int, dependence: str, effect: float) -> tuple[Rate, ...]:
    rng = np.random.default_rng([43, questions, int(dependence == "copies"), int(effect * 10)])
    old = new = covers = decided = 0
    for _ in range(sweeps):
        out = one_sweep(rng, questions, dependence, effect)
        if out is None:
            continue
        decided += 1
        old, new, covers = old + out[0], new + out[1], covers + out[2]
    return Rate(old, decided), Rate(new, decided), Rate(covers, decided)


def row_confirms(p: float, seeds: int, copies: bool) -> float:
    """P(an A/A question's row reads ``confirmed``) under the default tiers and a yes/no
    comparator, exactly: the baseline flips on no seed (rule 3) and the arm on a majority
    (rule 2). Copies: one draw per side, repeated, so ``(1 - p) p``.
    """
    if copies:
        return (1 - p) * p
    return float((1 - p) ** seeds * binom.sf(seeds // 2, seeds, p))


def rows_table() -> list[str]:
    out = []
    for seeds in (3, 5, 10):
        for copies in (False, True):
            mean = quad(row_confirms, 0.05, 0.6, args=(seeds, copies))[0] / 0.55
            at = " | ".join(f"{row_confirms(p, seeds, copies):.4f}" for p in (0.1, 0.3, 0.5))
            words = "copies" if copies else "independent"
            out.append(f"| {seeds} | {words} | {mean:.4f} | {at} |")
    return out


DOC = """{start}
## The arm-level interval against the arm-level test

Produced by `python scripts/calibrate_agreement.py --sweeps {sweeps}` ({sweeps} simulated sweeps a
row, fixed seeds). Three challengers judged together (Holm, `greater`, alpha 0.05), 5 seeds a
question, each question its own baseline flip rate (uniform on 0.05-0.6); the first challenger
carries the effect and is the one scored, the other two are A/A. *Agrees*: the interval leaves
out 0 exactly when the Holm-adjusted test is significant, over the sweeps where the test could
decide (not `underpowered`). *Before*: the interval at the normal quantile and the unadjusted
level (as before issue 43). *After*: the interval `arms.jsonl` records — the exact test's
critical value, at the level Holm applied to this challenger (`alpha / c`, `c = p_adjusted / p`).
*Covers*: the after interval holds the true effect (its level is 90% to 96.7% here).

| questions | seeds are | effect | decided | agrees, before | agrees, after | covers, after |
|---|---|---|---|---|---|---|
{rows}

After: agreement is 1 in every row, by construction (the interval's critical value at 0 is the
exact test's, at the adjusted level); a disagreement left in `arms.jsonl` means one question's
Newcombe interval beside its exact McNemar test, or a p at alpha to rounding.

## Per-question rows of an eval set

A per-question row's tier (rule 7) is not a test, and an eval set reads it once per question.
The share of A/A questions whose row reads `confirmed` under the default tiers with a yes/no
comparator (the baseline flips on no seed, the arm on a majority), computed exactly by the same
command (no simulation: the binomial probability, averaged over a flip rate `p` uniform on
0.05-0.6 by numerical integration, or at one `p`):

| seeds | seeds are | mean over p | p = 0.1 | p = 0.3 | p = 0.5 |
|---|---|---|---|---|---|
{rows_table}

With copies (a fixed API seed, temperature 0) a question's row is confirmed whenever its one
baseline answer is right and its one arm answer wrong, `(1 - p) p`, however many seeds: about one
A/A row in five. The arm-level verdict holds its level in both cases (above); the count of
confirmed rows does not.
{end}"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "statistics.md")
    args = parser.parse_args()
    rows = []
    for questions in QUESTIONS:
        for dependence, effect in CELLS:
            old, new, covers = cell(args.sweeps, questions, dependence, effect)
            rates = f"{old.n} | {old} | {new} | {covers}"
            rows.append(f"| {questions} | {dependence} | {effect:+.1f} | {rates} |")
            print(rows[-1], flush=True)
    section = DOC.format(
        start=START,
        end=END,
        sweeps=args.sweeps,
        rows="\n".join(rows),
        rows_table="\n".join(rows_table()),
    )
    replace_section(args.out, START, END, section)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
