"""Sequential sampling (rule 19), measured: runs saved, error rate, power, Ray utilisation.

Four parts, in one process:

1. **Runs and decisions by effect size** (simulation, the engine's own ``look``): a baseline
   flipping at 0.05 against one arm flipping at 0.05 ... 0.9, ``--sweeps`` sweeps per effect;
   sequential (samples 4, waves of 4, cap ``--max-samples``) against fixed sampling at the cap
   (exact McNemar, the engine's fixed-sample test). Seeds used, and the rate each calls the arm
   significant, with Clopper-Pearson 95% intervals. Target: >= 60% fewer runs on strong effects
   (arm flip rate >= 0.6) and no loss of power at the cap.
2. **A/A under sequential monitoring, through the engine** (``--aa-sweeps`` whole sweeps on the
   in-process executor): three ``placebo: true`` arms and the baseline, an unseeded runner
   (flip rate 0.3 whatever the seed), looked at after every wave up to 40 seeds, Holm over the
   three. The false-significant rate per arm and per sweep (any arm) must stay <= alpha within
   its interval.
3. **One engine sweep with every effect** (in-process): seeds each arm used and why it stopped.
4. **Ray utilisation**: a 20 ms runner, 10 scenarios x 4 challengers, sequential, on
   ``--workers`` workers of a warm local Ray instance: the ideal wall time (runs executed x 20 ms
   / workers) over the measured one. Target >= 90%.

Parts 1-3 are written to docs/statistics.md (its sequential section) and the figures to
docs/benchmarks.md, with this command:

    python scripts/bench_sequential.py
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from benchlog import record
from rates import Rate  # one Rate (with its Clopper-Pearson interval) for every script

from counterfact import compare_arms
from counterfact.verdicts.stats.sequential import look
from counterfact.verdicts.stats.settings import Waves, boundaries, stop_threshold
from counterfact.verdicts.stats.significance import at_most, mcnemar_exact

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
STATISTICS = ROOT / "docs" / "statistics.md"
ALPHA = 0.05
BASE_RATE = 0.05
MIN_EFFECT = 0.3
EFFECTS = (0.05, 0.1, 0.2, 0.4, 0.6, 0.9)
START, END = "<!-- sequential:start -->", "<!-- sequential:end -->"


def sequential_arm(arm: np.ndarray, base: np.ndarray, max_samples: int) -> tuple[int, bool]:
    """Seeds used and whether the arm was called significant (one challenger, threshold 20)."""
    threshold = stop_threshold(ALPHA, "holm", 1)
    for seeds in boundaries(4, 4, max_samples):
        a, b = arm[:seeds], base[:seeds]
        n10, n01 = int(np.sum(a & ~b)), int(np.sum(~a & b))
        found = look(n10, n01, seeds=seeds, rule=Waves(4, 4, max_samples, ALPHA, threshold))
        if found.stopped_for is not None:
            return seeds, found.stopped_for == "significant" or at_most(1 / found.e_value, ALPHA)
    raise AssertionError("the last boundary always decides")


def effect_rows(sweeps: int, max_samples: int) -> tuple[list[str], list[str], list[str]]:
    """Table rows, failed targets, and power lost at the cap (reported, not hidden)."""
    rng = np.random.default_rng(20261130)
    rows, failures, lost = [], [], []
    for rate in EFFECTS:
        used, seq_hits, fixed_hits = 0, 0, 0
        for _ in range(sweeps):
            arm = rng.random(max_samples) < rate
            base = rng.random(max_samples) < BASE_RATE
            seeds, significant = sequential_arm(arm, base, max_samples)
            used += seeds
            seq_hits += significant
            p = mcnemar_exact(int(np.sum(arm & ~base)), int(np.sum(~arm & base)))
            fixed_hits += at_most(p, ALPHA)
        saved = 1 - used / (sweeps * max_samples)
        seq, fixed = Rate(seq_hits, sweeps), Rate(fixed_hits, sweeps)
        rows.append(
            f"| {BASE_RATE} -> {rate} | {used / sweeps:.1f} of {max_samples} | {saved:.0%} | "
            f"{seq} | {fixed} |"
        )
        if rate >= 0.6 and saved < 0.6:
            failures.append(f"runs saved {saved:.0%} < 60% at {rate}")
        if rate != BASE_RATE and seq.hits / sweeps < fixed.low:
            lost.append(f"{BASE_RATE} -> {rate}: sequential {seq} vs fixed {fixed}")
    return rows, failures, lost


FUTILITY_CASES = (  # (label, baseline rate, arm rate, alternative, min_effect)
    ("null 0.1 -> 0.1", 0.1, 0.1, "greater", MIN_EFFECT),
    ("null 0.3 -> 0.3", 0.3, 0.3, "greater", MIN_EFFECT),
    ("effect 0.1 -> 0.5", 0.1, 0.5, "greater", MIN_EFFECT),
    ("null 0.1 -> 0.1, less", 0.1, 0.1, "less", MIN_EFFECT),
    ("fix 0.5 -> 0.1, less", 0.5, 0.1, "less", MIN_EFFECT),
    ("null 0.1 -> 0.1, two-sided", 0.1, 0.1, "two-sided", MIN_EFFECT),
    ("effect 0.1 -> 0.5, two-sided", 0.1, 0.5, "two-sided", MIN_EFFECT),
    ("A/A 0.3 -> 0.3, greater, no min_effect", 0.3, 0.3, "greater", None),
    ("A/A 0.3 -> 0.3, less, no min_effect", 0.3, 0.3, "less", None),
    ("A/A 0.3 -> 0.3, two-sided, no min_effect", 0.3, 0.3, "two-sided", None),
)


def futility_arm(arm: np.ndarray, base: np.ndarray, rule: Waves) -> tuple[int, str]:
    """Seeds used and why the arm stopped, with ``sequential.min_effect`` (waves of 10)."""
    for seeds in boundaries(rule.samples, rule.wave, rule.max_samples):
        a, b = arm[:seeds], base[:seeds]
        found = look(int(np.sum(a & ~b)), int(np.sum(~a & b)), seeds=seeds, pairs=seeds, rule=rule)
        if found.stopped_for is not None:
            return seeds, found.stopped_for
    raise AssertionError("the last boundary always decides")


def futility_rows(sweeps: int, cap: int) -> tuple[list[str], list[str]]:
    """Per case: seeds saved, significant and futile rates; the targets checked."""
    rng = np.random.default_rng(20261201)
    rows, failures = [], []
    for label, base_rate, arm_rate, alternative, d in FUTILITY_CASES:
        rule = Waves(10, 10, cap, ALPHA, stop_threshold(ALPHA, "holm", 1), alternative, d)
        used, stops = 0, Counter[str]()
        for _ in range(sweeps):
            seeds, why = futility_arm(rng.random(cap) < arm_rate, rng.random(cap) < base_rate, rule)
            used += seeds
            stops[why] += 1
        saved = 1 - used / (sweeps * cap)
        sig, fut = Rate(stops["significant"], sweeps), Rate(stops["futile"], sweeps)
        rows.append(f"| {label} | {used / sweeps:.1f} of {cap} | {saved:.0%} | {sig} | {fut} |")
        if base_rate == arm_rate and sig.low > ALPHA:
            failures.append(f"A/A {label}: significant {sig} above alpha")
        if base_rate == arm_rate and d is not None and saved < 0.5:
            failures.append(f"futility {label}: saved {saved:.0%}, significant {sig}")
        if base_rate != arm_rate and (sig.hits / sweeps < 0.8 or fut.hits / sweeps > 0.1):
            failures.append(f"futility {label}: found {sig}, futile {fut}")
    return rows, failures


def aa_engine(sweeps: int) -> tuple[Rate, Rate, Counter[str]]:
    """Whole sequential sweeps of three placebo arms on the in-process executor."""
    noise = random.Random(20261130)

    def unseeded(ctx: Any) -> str:
        return "B" if noise.random() < 0.3 else "A"

    per_arm, any_arm, stops = 0, 0, Counter[str]()
    arms = [{"id": "base"}] + [{"id": f"aa{i}", "placebo": True} for i in range(3)]
    for _ in range(sweeps):
        result = compare_arms(
            arms,
            unseeded,
            samples=4,
            reference="A",
            comparator="exact",
            executor="local",
            runner_version="aa",
            sequential={"max_samples": 40, "wave": 4},
        )
        calls = [r.statistical_verdict == "significant" for r in result.rows if not r.is_baseline]
        per_arm += sum(calls)
        any_arm += any(calls)
        stops.update(r.sequential.stopped_for for r in result.rows if r.sequential is not None)
    return Rate(per_arm, 3 * sweeps), Rate(any_arm, sweeps), stops


def effects_engine(max_samples: int) -> list[str]:
    arms = [{"id": "base", "facets": {"rate": BASE_RATE}}] + [
        {"id": f"rate-{r}", "facets": {"rate": r}} for r in EFFECTS if r != BASE_RATE
    ]
    result = compare_arms(
        arms,
        f"{HERE / 'bench_runners.py'}:rate_sleeper_fast",
        samples=4,
        reference="A",
        comparator="exact",
        executor="local",
        runner_version="effects",
        sequential={"max_samples": max_samples, "wave": 4},
    )
    lines = [
        f"| {r.arm} | {r.sequential.stopped_for} | {r.sequential.seeds_used} | "
        f"{r.sequential.e_value:.3g} | {r.statistical_verdict} |"
        for r in result.rows
        if r.sequential is not None
    ]
    seq = result.summary.sequential
    assert seq is not None
    lines.append(
        f"\nRuns recorded: {seq.runs_recorded} of {seq.runs_at_max_samples} at max_samples "
        f"({seq.runs_saved / seq.runs_at_max_samples:.0%} saved; the baseline runs as far as "
        "the longest arm)."
    )
    return lines


def ray_utilisation(workers: int) -> tuple[float, int, float, float]:
    import tempfile

    import ray

    from counterfact.orchestrator.engine.executors.ray_exec import RayExecutor

    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    arms = [{"id": "base", "facets": {"rate": BASE_RATE}}] + [
        {"id": f"r{r}", "facets": {"rate": r, "arm": i}}
        for i, r in enumerate((0.05, 0.3, 0.6, 0.9))
    ]
    scenarios = [{"id": f"s{i}", "reference": "A"} for i in range(10)]
    runner = f"{HERE / 'bench_runners.py'}:rate_sleeper"
    with tempfile.TemporaryDirectory() as tmp:
        kwargs: dict[str, Any] = {
            "samples": 4,
            "scenarios": scenarios,
            "comparator": "exact",
            "executor": "ray",
            "runner_version": "util",
            "sequential": {"max_samples": 40, "wave": 4},
        }
        compare_arms(arms[:2], runner, out=Path(tmp) / "warm", **kwargs)  # warm the workers
        start = time.perf_counter()
        result = compare_arms(arms, runner, out=Path(tmp) / "timed", **kwargs)
        wall = time.perf_counter() - start
    ray.shutdown()
    del RayExecutor
    runs = result.summary.execution.runs_used
    ideal = runs * 0.02 / workers
    return ideal / wall, runs, ideal, wall


def write_statistics(section: str) -> None:
    text = STATISTICS.read_text(encoding="utf-8")
    block = f"{START}\n{section}\n{END}"
    if START in text:
        text = re.sub(re.escape(START) + ".*?" + re.escape(END), lambda _: block, text, flags=re.S)
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    STATISTICS.write_text(text, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=2000)
    parser.add_argument("--aa-sweeps", type=int, default=1000)
    parser.add_argument("--max-samples", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-record", action="store_true", help="do not write to docs")
    args = parser.parse_args()

    effects, failures, lost = effect_rows(args.sweeps, args.max_samples)
    futility, futility_failures = futility_rows(args.sweeps, args.max_samples)
    failures += futility_failures
    t0 = time.perf_counter()
    per_arm, any_arm, stops = aa_engine(args.aa_sweeps)
    aa_s = time.perf_counter() - t0
    if per_arm.low > ALPHA or any_arm.low > ALPHA:
        failures.append(f"A/A above alpha: per arm {per_arm}, any arm {any_arm}")
    engine = effects_engine(args.max_samples)
    util, runs, ideal, wall = ray_utilisation(args.workers)
    if util < 0.9:
        failures.append(f"Ray utilisation {util:.0%} < 90%")

    verdict = (
        "runs saved, A/A and utilisation targets met"
        if not failures
        else ("FAILED: " + "; ".join(failures))
    )
    power = (
        "no loss of power at the cap (every effect's sequential rate within the fixed test's "
        "interval)"
        if not lost
        else "power lost at the cap (target not met): " + "; ".join(lost)
    )
    section = SECTION.format(
        sweeps=args.sweeps,
        aa_sweeps=args.aa_sweeps,
        max_samples=args.max_samples,
        effects="\n".join(effects),
        per_arm=per_arm,
        any_arm=any_arm,
        stops=", ".join(f"{n} {k}" for k, n in sorted(stops.items())),
        engine="\n".join(engine),
        futility="\n".join(futility),
        min_effect=MIN_EFFECT,
        verdict=verdict,
        power=power,
    )
    bench = [
        f"- runs saved, simulated (cap {args.max_samples}, {args.sweeps} sweeps per effect): "
        + "; ".join(
            f"{rate}: {row.split('|')[3].strip()}"
            for rate, row in zip(EFFECTS, effects, strict=True)
        ),
        f"- futility with min_effect {MIN_EFFECT} (cap {args.max_samples}, {args.sweeps} sweeps "
        "per case): "
        + "; ".join(
            f"{row.split('|')[1].strip()}: saved {row.split('|')[3].strip()}, "
            f"significant {row.split('|')[4].strip()}, futile {row.split('|')[5].strip()}"
            for row in futility
        ),
        f"- A/A through the engine, {args.aa_sweeps} sweeps x 3 placebo arms ({aa_s:.0f} s): "
        f"false-significant per arm {per_arm}, any arm {any_arm} (alpha {ALPHA})",
        f"- Ray utilisation, 20 ms runner, {args.workers} workers, sequential 10 scenarios x 4 "
        f"challengers: {runs} runs, ideal {ideal:.2f} s, measured {wall:.2f} s: "
        f"**{util:.1%} of ideal** (target >= 90%)",
        f"- {verdict}; {power}",
    ]
    print(section)
    print("\n".join(bench))
    if not args.no_record:
        write_statistics(section)
        record("bench_sequential", bench)
    return 1 if failures else 0


SECTION = """## Sequential sampling (rule 19)

Produced by `python scripts/bench_sequential.py` (fixed seeds; rates with Clopper-Pearson 95%
intervals; alpha = 0.05). Check: **{verdict}**; {power}.

### Runs used and decisions by effect size

One arm against a baseline flipping at 0.05, {sweeps} simulated sweeps per row, decided by the
engine's own `look` (beta-binomial mixture e-process, looked at after the first 4 seeds and
every 4 after, threshold 20 for a single challenger) against fixed sampling at
max_samples = {max_samples} with the exact McNemar test.

| flip rates | seeds used (mean) | runs saved | sequential: significant | fixed at cap |
|---|---|---|---|---|
{effects}

Reading it: the first row is an A/A arm (its "significant" rate is a false-alarm rate). Strong
effects stop after a wave or two. Where the effect is small the e-process, which pays for being
valid at every look, calls fewer arms significant than one fixed test at the cap would — the
price of stopping early; the table shows it rather than hiding it.

### Futility with a declared minimal effect

`sequential.min_effect: {min_effect}`: an arm also stops as `futile` once an always-valid test
(a mixture of betting martingales on the paired differences, `counterfact.verdicts.stats.futility`)
rules out an effect of {min_effect} or more in the tested direction. {sweeps} simulated arms per
row (a seeded runner: baseline and arm independent per seed), first look at 10 seeds and every 10
after, cap {max_samples}, threshold 20 (one challenger). Targets: null arms save at least 50% of
their seeds; every null and A/A row is significant at most alpha of the time (the last three
rows calibrate the mirrored and two-sided e-processes without `min_effect`); arms with a 0.1 ->
0.5 effect are found at least 80% of the time and stopped as futile at most 10%.

| case (baseline -> arm) | seeds used (mean) | seeds saved | significant | futile |
|---|---|---|---|---|
{futility}

Reading it: the "futile" rate of an effect row is the error of abandoning a real effect; it is
bounded by alpha for an effect of exactly {min_effect} (exact enumeration in
`tests/verdicts/stats/test_futility.py`) and is smaller for larger ones.

### A/A under sequential monitoring, through the engine

{aa_sweeps} whole sweeps on the in-process executor: a baseline and three `placebo: true` arms,
an unseeded runner (flip rate 0.3 whatever the seed), samples 4, waves of 4 up to 40 seeds,
Holm over the three arms.

- false-significant rate per arm: **{per_arm}**
- sweeps with any arm significant (family-wise): **{any_arm}**
- how the arms stopped: {stops}

### One engine sweep with every effect

Seeded runner, baseline 0.05, samples 4, waves of 4, cap {max_samples}, Holm over five arms.

| arm | stopped for | seeds used | e-value | statistical verdict |
|---|---|---|---|---|
{engine}
"""


if __name__ == "__main__":
    sys.exit(main())
