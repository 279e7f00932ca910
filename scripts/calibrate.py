"""Calibration you can rerun: error rates of the test and of the tiers, measured by simulation.

Simulated runners, in-process, judged with counterfact's own functions (the exact McNemar and
Fisher tests, the multiplicity adjustments, the statistical verdict with its underpowered rule,
the majority rule and the zero-tolerance gate):

- **seeded** runners: the seed fixes the outcome, so on an A/A comparison the arm flips on
  exactly the seeds the baseline flips on;
- **unseeded** runners (an LLM behind an API): every run flips independently with the cell's
  flip rate, whatever its seed.

The reference is either a prior run (declared) or the baseline's seed-0 output; then seed 0 of
the baseline cannot flip (it is the reference) and the test leaves pair 0 out (rule 13).

For each cell, ``--sweeps`` simulated sweeps (default 2,000) with a fixed seed give:

1. A/A arms: the rate at which the test calls an arm significant (must be <= alpha within its
   interval) and the rate at which the tiers confirm it;
2. several A/A arms against one baseline: the family-wise rate of any significant arm under each
   adjustment, and of any confirmed arm under the tiers;
3. power: how often a real effect (baseline flip rate 0.1, arm 0.8; and 0.1 vs 0.4) is called
   significant / confirmed, by sample size.

Every rate comes with its Clopper-Pearson 95% interval. Writes ``docs/statistics.md``.

    python scripts/calibrate.py [--sweeps 2000] [--out docs/statistics.md]
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rates import ALPHA, Rate

from counterfact.probes.stats import baseline_stable, probe_flipped
from counterfact.records.vocabulary import Adjustment, Alternative
from counterfact.verdicts.family import verdict_of
from counterfact.verdicts.stats.intervals import flip_rate_interval
from counterfact.verdicts.stats.multiplicity import ADJUSTMENTS, adjust, best_factor
from counterfact.verdicts.stats.significance import (
    at_most,
    fisher_one_sided,
    floor_of,
    mcnemar_exact,
)

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def paired_p(n10: int, n01: int) -> float:
    return mcnemar_exact(n10, n01)


@functools.cache
def unpaired_p(af: int, bf: int, n: int) -> float:
    return fisher_one_sided(af, n, bf, n)


@dataclass(frozen=True)
class Sweep:
    """One simulated scenario: per-seed flip bits of the baseline and of each arm."""

    base: np.ndarray
    arms: list[np.ndarray]
    ref_is_seed0: bool


def simulate(
    rng: np.random.Generator,
    samples: int,
    base_rate: float,
    arm_rates: list[float],
    *,
    seeded: bool,
    ref_is_seed0: bool,
) -> Sweep:
    """Draw one sweep. Seeded A/A arms copy the baseline's bits; otherwise draws are independent."""
    base = rng.random(samples) < base_rate
    if ref_is_seed0:
        base[0] = False  # the baseline's seed 0 is the reference: it cannot flip
    arms = []
    for rate in arm_rates:
        if seeded and rate == base_rate:
            arms.append(base.copy())
        else:
            arms.append(rng.random(samples) < rate)
    return Sweep(base, arms, ref_is_seed0)


def test_p(sweep: Sweep, arm: np.ndarray, pairing: str) -> float:
    """Counterfact's test of one arm (pair 0 left out when it is the reference)."""
    start = 1 if sweep.ref_is_seed0 else 0
    a, b = arm[start:], sweep.base[start:]
    if pairing == "seed":
        return paired_p(int(np.sum(a & ~b)), int(np.sum(~a & b)))
    return unpaired_p(int(a.sum()), int(b.sum()), len(a))


def significant(
    sweep: Sweep, p_adjusted: float, pairing: str, method: Adjustment = "none", size: int = 1
) -> bool:
    """The engine's statistical verdict (underpowered when even the floor, adjusted, misses)."""
    pairs = len(sweep.base) - (1 if sweep.ref_is_seed0 else 0)
    floor = floor_of(pairs, "seed" if pairing == "seed" else "none")
    return verdict_of(floor, p_adjusted, ALPHA, best_factor(method, size)) == "significant"


def tier_confirms(sweep: Sweep, arm: np.ndarray) -> bool:
    """The seed's tiers (rules 2, 3, 7): a stable baseline and a majority flip confirm."""
    samples = len(arm)
    return baseline_stable(int(sweep.base.sum())) and probe_flipped(int(arm.sum()), samples)


def aa_cell(
    sweeps: int, samples: int, flip: float, *, seeded: bool, seed0: bool, pairing: str, seed: int
) -> tuple[Rate, Rate]:
    """A/A: (test significant rate, tier confirm rate) of one arm."""
    rng = np.random.default_rng(seed)
    sims = [
        simulate(rng, samples, flip, [flip], seeded=seeded, ref_is_seed0=seed0)
        for _ in range(sweeps)
    ]
    sig = Rate(sum(significant(s, test_p(s, s.arms[0], pairing), pairing) for s in sims), sweeps)
    conf = Rate(sum(tier_confirms(s, s.arms[0]) for s in sims), sweeps)
    return sig, conf


def family_cell(
    sweeps: int, samples: int, flip: float, arms: int, method: Adjustment, seed: int
) -> Rate:
    """Family-wise rate of any significant A/A arm (unseeded, prior-run reference)."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(sweeps):
        s = simulate(rng, samples, flip, [flip] * arms, seeded=False, ref_is_seed0=False)
        p = adjust([test_p(s, a, "seed") for a in s.arms], method)
        hits += any(significant(s, x, "seed", method, arms) for x in p)
    return Rate(hits, sweeps)


def family_tiers(sweeps: int, samples: int, flip: float, arms: int, seed: int) -> Rate:
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(sweeps):
        s = simulate(rng, samples, flip, [flip] * arms, seeded=False, ref_is_seed0=False)
        hits += any(tier_confirms(s, a) for a in s.arms)
    return Rate(hits, sweeps)


def power_cell(sweeps: int, samples: int, base: float, arm: float, seed: int) -> tuple[Rate, Rate]:
    rng = np.random.default_rng(seed)
    sims = [
        simulate(rng, samples, base, [arm], seeded=False, ref_is_seed0=False) for _ in range(sweeps)
    ]
    sig = Rate(sum(significant(s, test_p(s, s.arms[0], "seed"), "seed") for s in sims), sweeps)
    conf = Rate(sum(tier_confirms(s, s.arms[0]) for s in sims), sweeps)
    return sig, conf


SAMPLES = (3, 5, 10, 20, 50)
FLIPS = (0.05, 0.1, 0.2, 0.3, 0.5)


def aa_section(sweeps: int) -> tuple[list[str], list[str]]:
    lines = [
        "| runner | reference | pairing | samples | flip rate | test significant | tiers confirm |",
        "|---|---|---|---|---|---|---|",
    ]
    failures: list[str] = []
    worst: list[Rate] = []
    cell = 0
    for seeded in (False, True):
        for seed0 in (False, True):
            for pairing in ("seed", "none"):
                for samples in SAMPLES:
                    for flip in FLIPS:
                        cell += 1
                        sig, conf = aa_cell(
                            sweeps,
                            samples,
                            flip,
                            seeded=seeded,
                            seed0=seed0,
                            pairing=pairing,
                            seed=cell,
                        )
                        worst.append(sig)
                        if sig.low > ALPHA or sig.hits / sig.n > ALPHA:
                            failures.append(f"cell {cell}: {sig}")
                        lines.append(
                            f"| {'seeded' if seeded else 'unseeded'} | "
                            f"{'baseline seed 0' if seed0 else 'prior run'} | {pairing} | "
                            f"{samples} | {flip} | {sig} | {conf} |"
                        )
    top = max(worst, key=lambda r: r.hits / r.n)
    high = max(flip_rate_interval(r.hits, r.n).high for r in worst)  # type: ignore[union-attr]
    lines.append("")
    lines.append(
        f"Highest A/A rate of the test over these cells: {top}; highest upper interval bound: "
        f"{high:.3f}."
    )
    return lines, failures


DIRECTIONS = ("greater", "less", "two-sided")


def exact_size(alternative: Alternative, m: int) -> float:
    """P(p <= alpha) under the null for m discordant pairs, by enumerating every outcome."""
    return sum(
        math.comb(m, k) / 2**m
        for k in range(m + 1)
        if at_most(mcnemar_exact(k, m - k, alternative), ALPHA)
    )


def direction_cell(
    sweeps: int, samples: int, flip: float, alternative: Alternative, seed: int
) -> Rate:
    """A/A significant rate of the paired test looking one way (unseeded, prior-run reference)."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(sweeps):
        s = simulate(rng, samples, flip, [flip], seeded=False, ref_is_seed0=False)
        a, b = s.arms[0], s.base
        p = mcnemar_exact(int(np.sum(a & ~b)), int(np.sum(~a & b)), alternative)
        floor = floor_of(samples, "seed", alternative)
        hits += verdict_of(floor, p, ALPHA) == "significant"
    return Rate(hits, sweeps)


def direction_section(sweeps: int) -> tuple[list[str], list[str]]:
    lines = ["| alternative | samples | flip rate | A/A significant | exact size, worst m <= 200 |"]
    lines.append("|---|---|---|---|---|")
    failures: list[str] = []
    for i, alternative in enumerate(DIRECTIONS):
        worst = max((exact_size(alternative, m), m) for m in range(1, 201))
        for j, (samples, flip) in enumerate(((10, 0.3), (30, 0.3), (50, 0.5))):
            r = direction_cell(sweeps, samples, flip, alternative, seed=900 + 10 * i + j)
            if r.hits / r.n > ALPHA or r.low > ALPHA or worst[0] > ALPHA:
                failures.append(f"{alternative} {samples}: {r}")
            lines.append(
                f"| {alternative} | {samples} | {flip} | {r} | {worst[0]:.4f} (m = {worst[1]}) |"
            )
    return lines, failures


def family_section(sweeps: int) -> list[str]:
    lines = [
        "| A/A arms | "
        + " | ".join(f"any significant ({m})" for m in ADJUSTMENTS)
        + " | any confirmed (tiers) |",
        "|---|" + "---|" * (len(ADJUSTMENTS) + 1),
    ]
    for arms in (1, 3, 5, 10):
        rates = [family_cell(sweeps, 10, 0.3, arms, m, seed=1000 + arms) for m in ADJUSTMENTS]
        tiers = family_tiers(sweeps, 3, 0.1, arms, seed=2000 + arms)
        lines.append(f"| {arms} | " + " | ".join(str(r) for r in rates) + f" | {tiers} |")
    return lines


def power_section(sweeps: int) -> list[str]:
    lines = [
        "| baseline / arm flip rate | samples | test significant | tiers confirm |",
        "|---|---|---|---|",
    ]
    for base, arm in ((0.1, 0.8), (0.1, 0.4), (0.0, 0.5)):
        for samples in (3, 5, 10, 20, 30, 50):
            sig, conf = power_cell(sweeps, samples, base, arm, seed=int(3000 + 100 * arm + samples))
            lines.append(f"| {base} / {arm} | {samples} | {sig} | {conf} |")
    return lines


KEPT = ("sequential", "evalset", "bisect", "plan")
"""Sections other scripts own (``bench_sequential.py``'s, ``calibrate_evalset.py``'s,
``calibrate_bisect.py``'s, ``calibrate_plan.py``'s)."""


def _kept_sections(path: Path) -> str:
    """The sections other scripts own, carried over unchanged."""
    if not path.exists():
        return ""
    old = path.read_text(encoding="utf-8")
    kept = ""
    for name in KEPT:
        start = old.find(f"<!-- {name}:start -->")
        end = old.find(f"<!-- {name}:end -->")
        if start >= 0 and end >= 0:
            kept += "\n" + old[start : end + len(f"<!-- {name}:end -->")] + "\n"
    return kept


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=2000)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "statistics.md")
    args = parser.parse_args()
    aa, failures = aa_section(args.sweeps)
    directions, wrong_way = direction_section(args.sweeps)
    failures += wrong_way
    from calibrate_more import other_directions_section, placebo_section, pooled_section

    others, other_failures = other_directions_section(args.sweeps)
    failures += other_failures

    pooled_lines, pooled_failures = pooled_section(args.sweeps)
    failures += pooled_failures
    placebos, placebo_failures = placebo_section(max(args.sweeps // 4, 50))
    failures += placebo_failures
    family = family_section(args.sweeps)
    power = power_section(args.sweeps)
    text = DOC.format(
        sweeps=args.sweeps,
        aa="\n".join(aa),
        family="\n".join(family),
        power="\n".join(power),
        directions="\n".join(directions),
        other_directions="\n".join(others),
        placebos="\n".join(placebos),
        pooled="\n".join(pooled_lines),
        placebo_sweeps=max(args.sweeps // 4, 50),
        verdict="every cell passed" if not failures else "FAILED: " + "; ".join(failures),
    )
    args.out.write_text(text + _kept_sections(args.out), encoding="utf-8")
    print(f"wrote {args.out}; A/A check: {failures or 'ok'}")
    return 1 if failures else 0


DOC = """# Statistics: what the verdicts' error rates are, measured

Produced by `python scripts/calibrate.py --sweeps {sweeps}` (simulated runners, counterfact's own
test, adjustment and tier functions; every rate with its Clopper-Pearson 95% interval; fixed
seeds, so the same command gives the same file). alpha = 0.05.

## The test on A/A arms

An A/A arm reruns the baseline's configuration: any "significant" call is a false alarm, so the
rate must stay at or below alpha. Check over every cell (the measured rate at most 0.05 and its
interval reaching 0.05 or below): **{verdict}**. The seed's tiers have no such bound: with an
unseeded runner they confirm A/A arms at small samples, most of all when the reference is the
baseline's own seed 0.

{aa}

## Directions: `statistics.alternative`

The paired test looking for a break (`greater`), a fix (`less`) or either (`two-sided`), on A/A
arms (unseeded runner, prior-run reference): the simulated false-significant rate with its
interval, and the test's exact size — the probability of p <= 0.05 under the null, summed over
every outcome of m discordant pairs — at its worst over m = 1..200. Both stay at or below alpha
for every direction (the exact test is conservative; the two-sided p is the binomial test's
usual one, the sum of outcomes no more likely than the one seen).

{directions}

The unpaired test (`statistics.pairing: none`: Fisher's exact test on the arm's and the
baseline's flips, independent runs) and the pooled test across scenarios (the exact McNemar test
on the discordant pairs summed over a challenger's scenarios, as `counterfact.verdicts.family`
computes it; four scenarios with flip rates 0.1 to 0.4, arm and baseline alike in each) honour
the same directions; their A/A rates, each at or below alpha:

{other_directions}

## Placebo arms: `placebo: fresh` against `placebo: true`

{placebo_sweeps} whole sweeps per row through the engine (in-process executor): a *seeded*
runner — its answer fixed by its seed, as the README advises — flipping 30% of seeds, with two
`placebo: fresh` arms and one `placebo: true` arm, reference declared, Holm over the three. On
the baseline's own seeds (`true`) a seeded program answers identically: no discordant pair, so
its test measures nothing but determinism. On fresh seeds (`fresh`) its runs are independent
draws of the baseline, paired by seed index: about 2 x 0.3 x 0.7 = 42% of pairs are discordant,
and its significant rate is the test's false-alarm rate on this program (at most alpha).

{placebos}

## The pooled effect's interval and the heterogeneity flag

{sweeps} simulated sweeps per row: S scenarios of 20 independent seed pairs, each scenario with
its own baseline flip rate (uniform on 0.1-0.4) and its own effect (uniform on 0.2 ± spread), so
the pooled estimand is 0.2. The clustered interval (CR1 over scenarios with t on S - 1 degrees
of freedom, hulled with Newcombe's interval on the summed counts;
`counterfact.verdicts.stats.pooled`) should cover 0.2 at least 95% of the time; Newcombe's interval
on the sums alone, which treats every pair as independent, is shown for comparison — it undercovers
once the scenarios' effects differ. With no spread the effects agree, and the heterogeneity flag
(Cochran's Q at 0.05) is a false alarm; it must stay at or below alpha. With a spread of ±0.15 over
20 pairs a scenario the flag has little power: it is built to catch gross disagreement (one scenario
broken, the others untouched, as in `tests/orchestrator/drivers/test_pooled_line.py`), not mild
spread — a pooled effect without the flag is not proof that the scenarios agree.

{pooled}

## Several arms: family-wise rates

Unseeded runner, flip rate 0.3, 10 samples, prior-run reference, k A/A arms against one
baseline: the rate of sweeps where *any* arm is called significant, by adjustment (`holm`
controls it; `none` does not). The tiers' column is at 3 samples and flip rate 0.1.

{family}

## Power by sample size

Unseeded runner, prior-run reference, one arm: how often a real effect is called significant by
the test, and confirmed by the tiers. The tiers lose power as samples grow (any baseline flip
makes every verdict inconclusive); the test gains it.

{power}

## Recommendation

Use at least 5 samples for one challenger with a declared reference: below that the paired test
cannot reach 0.05 (`(1/2)^4 > 0.05`) and says `underpowered` with the sample count that could.
Add one when the reference is the baseline's seed 0 (pair 0 is left out), and more with several
challengers: under Holm the smallest adjusted p is the family size times `(1/2)^pairs` (6
samples for 2 arms, 8 for 10). Measured above: a large effect (flip rate 0.1 ->
0.8) is significant in about 90% of sweeps at 10 samples and in all of them at 20; a moderate one
(0.1 -> 0.4) needs about 30 samples for 79% and 50 for 96%. The exact paired test is
conservative (its A/A rate stays well under 0.05), and it holds for unseeded runners too (the
unseeded A/A rows). rule 14 offers `statistics.pairing: none` for runners whose seed does
not control their randomness; measured here, the paired test keeps its error rate for those too
and is the more powerful, so choose `none` only to avoid relying on the pairing at all. With
several arms keep `adjust: holm` (the family-wise rate stays under 0.05; `none` reaches 0.07 at
10 arms). Add a `placebo: fresh` arm to see the false-alarm rate on your own program (a
`placebo: true` arm on a seeded program only checks that the seed controls it).
"""


if __name__ == "__main__":
    sys.exit(main())
