"""The calibration cells added with issue 19: placebo arms through the engine, and the pooled
effect's interval with the heterogeneity flag. Run by ``scripts/calibrate.py`` (which writes
their sections of ``docs/statistics.md``); kept apart so each script stays one screenful of
jobs.
"""

from __future__ import annotations

import numpy as np
from rates import ALPHA, Rate


def placebo_cell(sweeps: int, samples: int, seed: int) -> dict[str, tuple[Rate, float]]:
    """Whole sweeps through the engine (in-process) of a seeded runner (flip rate 0.3, its draw
    fixed by the seed) with two ``placebo: fresh`` arms and one ``placebo: true`` arm: per kind,
    the A/A significant rate and the mean share of seed pairs that are discordant.
    """
    from counterfact import RunContext, compare_arms

    arms: list[dict[str, object]] = [
        {"id": "base"},
        {"id": "fresh1", "placebo": "fresh"},
        {"id": "fresh2", "placebo": "fresh"},
        {"id": "same", "placebo": True},
    ]
    hits = {"fresh-seeds": 0, "same-seeds": 0}
    arms_of = {"fresh-seeds": 2, "same-seeds": 1}
    discordant = {"fresh-seeds": 0, "same-seeds": 0}
    for sweep in range(sweeps):

        def runner(ctx: RunContext, sweep: int = sweep) -> str:
            draw = np.random.default_rng([seed, sweep, ctx.seed]).random()
            return "B" if draw < 0.3 else "A"

        result = compare_arms(
            arms,
            runner,
            samples=samples,
            reference="A",
            comparator="exact",
            executor="local",
            runner_version=f"cal-{seed}-{sweep}",
        )
        for row in result.rows:
            if row.placebo is None or row.test is None:
                continue
            hits[row.placebo] += row.statistical_verdict == "significant"
            discordant[row.placebo] += row.test.n10 + row.test.n01
    return {
        kind: (
            Rate(hits[kind], sweeps * arms_of[kind]),
            discordant[kind] / (sweeps * arms_of[kind] * samples),
        )
        for kind in hits
    }


def placebo_section(sweeps: int) -> tuple[list[str], list[str]]:
    lines = [
        "| samples | placebo | discordant pairs (share) | A/A significant |",
        "|---|---|---|---|",
    ]
    failures: list[str] = []
    for samples in (10, 30):
        cells = placebo_cell(sweeps, samples, seed=4000 + samples)
        for kind, (r, share) in cells.items():
            label = "fresh" if kind == "fresh-seeds" else "true"
            lines.append(f"| {samples} | `{label}` | {share:.3f} | {r} |")
            if kind == "fresh-seeds" and (r.hits / r.n > ALPHA or r.low > ALPHA or share == 0):
                failures.append(f"placebo fresh {samples}: {r}, discordant {share:.3f}")
    return lines, failures


def pooled_cell(sweeps: int, scenarios: int, spread: float, seed: int) -> tuple[Rate, Rate, Rate]:
    """Coverage of the pooled effect's interval, and how often heterogeneity is flagged.

    Each sweep: ``scenarios`` scenarios of 20 independent pairs; scenario s has a baseline flip
    rate ``b_s ~ U(0.1, 0.4)`` and an effect ``delta_s ~ U(0.2 - spread, 0.2 + spread)`` (the
    arm flips at ``b_s + delta_s``). The pooled estimand is the mean effect, 0.2. Returns the
    clustered interval's coverage, the coverage of Newcombe's interval on the summed counts alone
    (which ignores the clustering), and the rate of a heterogeneity flag.
    """
    from counterfact.verdicts.stats.pooled import Stratum, pooled_effect
    from counterfact.verdicts.stats.significance import effect_of_counts

    rng = np.random.default_rng(seed)
    covered, naive, flagged = 0, 0, 0
    for _ in range(sweeps):
        strata = []
        for k in range(scenarios):
            b = rng.uniform(0.1, 0.4)
            a = b + rng.uniform(0.2 - spread, 0.2 + spread)
            arm, base = rng.random(20) < a, rng.random(20) < b
            strata.append(
                Stratum(
                    f"s{k}",
                    int(np.sum(arm & ~base)),
                    int(np.sum(~arm & base)),
                    int(np.sum(arm & base)),
                    20,
                )
            )
        found = pooled_effect(strata)
        assert found is not None
        covered += found.low <= 0.2 <= found.high
        flagged += found.heterogeneous
        summed = effect_of_counts(
            sum(x.n10 for x in strata),
            sum(x.n01 for x in strata),
            sum(x.n11 for x in strata),
            20 * scenarios,
        )
        assert summed is not None
        naive += summed.low <= 0.2 <= summed.high
    return Rate(covered, sweeps), Rate(naive, sweeps), Rate(flagged, sweeps)


def pooled_section(sweeps: int) -> tuple[list[str], list[str]]:
    lines = [
        "| scenarios | effect spread | clustered CI covers | Newcombe on sums covers | "
        "heterogeneity flagged |",
        "|---|---|---|---|---|",
    ]
    failures: list[str] = []
    for i, scenarios in enumerate((3, 6, 12)):
        for j, spread in enumerate((0.0, 0.15)):
            cov, naive, flag = pooled_cell(sweeps, scenarios, spread, seed=5000 + 10 * i + j)
            lines.append(f"| {scenarios} | ±{spread} | {cov} | {naive} | {flag} |")
            if cov.high < 0.95:
                failures.append(f"pooled coverage {scenarios} ±{spread}: {cov}")
            if spread == 0 and flag.low > ALPHA:
                failures.append(f"heterogeneity false flags {scenarios}: {flag}")
    return lines, failures


def _aa_unpaired(rng: np.random.Generator, samples: int, flip: float, alternative: str) -> bool:
    """One A/A arm judged by the engine's unpaired test (``pairing: none``)."""
    from counterfact.verdicts.family import verdict_of
    from counterfact.verdicts.stats.significance import fisher_one_sided, floor_of

    arm, base = rng.random(samples) < flip, rng.random(samples) < flip
    p = fisher_one_sided(int(arm.sum()), samples, int(base.sum()), samples, alternative)  # type: ignore[arg-type]
    return verdict_of(floor_of(samples, "none", alternative), p, ALPHA) == "significant"  # type: ignore[arg-type]


POOLED_RATES = (0.1, 0.2, 0.3, 0.4)
"""The scenarios' flip rates in the pooled A/A cells (each scenario's arm and baseline alike)."""


def _aa_pooled(rng: np.random.Generator, samples: int, alternative: str) -> bool:
    """One A/A challenger over four scenarios judged by the pooled test as
    ``counterfact.verdicts.family.pooled`` computes it: the exact McNemar test on the discordant
    pairs summed over the scenarios."""
    from counterfact.verdicts.family import verdict_of
    from counterfact.verdicts.stats.significance import floor_of, mcnemar_exact

    n10 = n01 = 0
    for flip in POOLED_RATES:
        arm, base = rng.random(samples) < flip, rng.random(samples) < flip
        n10 += int(np.sum(arm & ~base))
        n01 += int(np.sum(~arm & base))
    p = mcnemar_exact(n10, n01, alternative)  # type: ignore[arg-type]
    floor = floor_of(samples * len(POOLED_RATES), "seed", alternative)  # type: ignore[arg-type]
    return verdict_of(floor, p, ALPHA) == "significant"


def other_directions_section(sweeps: int) -> tuple[list[str], list[str]]:
    """A/A rates of the unpaired test and the pooled test in each direction."""
    lines = [
        "| test | alternative | samples | flip rate | A/A significant |",
        "|---|---|---|---|---|",
    ]
    failures: list[str] = []
    for i, alternative in enumerate(("greater", "less", "two-sided")):
        for j, (samples, flip) in enumerate(((10, 0.3), (30, 0.3), (50, 0.5))):
            rng = np.random.default_rng(1900 + 10 * i + j)
            r = Rate(
                sum(_aa_unpaired(rng, samples, flip, alternative) for _ in range(sweeps)), sweeps
            )
            lines.append(f"| unpaired (Fisher) | {alternative} | {samples} | {flip} | {r} |")
            if r.hits / r.n > ALPHA or r.low > ALPHA:
                failures.append(f"unpaired {alternative} {samples}: {r}")
        for j, samples in enumerate((10, 30)):
            rng = np.random.default_rng(2900 + 10 * i + j)
            r = Rate(sum(_aa_pooled(rng, samples, alternative) for _ in range(sweeps)), sweeps)
            rates = "/".join(f"{f:g}" for f in POOLED_RATES)
            lines.append(
                f"| pooled over 4 scenarios | {alternative} | {samples} each | {rates} | {r} |"
            )
            if r.hits / r.n > ALPHA or r.low > ALPHA:
                failures.append(f"pooled {alternative} {samples}: {r}")
    return lines, failures
