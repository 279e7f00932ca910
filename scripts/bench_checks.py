"""Judging alone with per-question checks: ``--questions`` questions x 2 arms x ``--seeds``
seeds fed to :class:`~counterfact.probes.tally.ScenarioTally` and assessed, no driver, no files.

Three variants, interleaved over ``--rounds``: the sweep's regex comparator for every question
(``default``), every question the same ``expect`` (``same``: one spec, one comparator), every
question its own regex (``distinct``: one spec each). Prints the time to build the checks (as
the resolver does, through :class:`~counterfact.orchestrator.config.checks.CheckBuilder`) and
the time to judge.

    python scripts/bench_checks.py [--questions 10000 --seeds 5 --rounds 3]
"""

from __future__ import annotations

import argparse
import gc
import time
from pathlib import Path

from counterfact.orchestrator.config.checks import CheckBuilder
from counterfact.orchestrator.config.components import ComparatorConfig
from counterfact.probes.arms import ArmSpec
from counterfact.probes.comparators import Comparator, RegexComparator
from counterfact.probes.regex_search import compile_pattern
from counterfact.probes.scenarios import ScenarioSpec
from counterfact.probes.similarity import SIMILARITIES
from counterfact.probes.tally import ScenarioTally
from counterfact.records import RunRecord
from counterfact.verdicts.assess import assess_tally

ARMS = (ArmSpec(id="base", facets={}), ArmSpec(id="alt", facets={"x": 1}))
PATTERN = "([AB])"


def _records(questions: int, seeds: int) -> list[list[RunRecord]]:
    """Every question's runs: the challenger answers B on one seed pair in four."""
    return [
        [
            RunRecord(
                scenario=f"q{q}",
                arm=a.id,
                seed=s,
                output="B" if a.id == "alt" and (q + s) % 4 == 0 else "A",
                manifest=None,
                cost=None,
                error=None,
                duration_s=0.0,
                finished_at="2026-12-02T00:00:00.000+00:00",
            )
            for a in ARMS
            for s in range(seeds)
        ]
        for q in range(questions)
    ]


def _questions(variant: str, count: int) -> tuple[list[ScenarioSpec], Comparator, int]:
    """The questions with their checks, the sweep's comparator, and the checks built."""
    checks = CheckBuilder(Path("."))
    default = RegexComparator(compile_pattern(PATTERN))
    if variant == "default":
        return [ScenarioSpec(f"q{q}", {}, "A") for q in range(count)], default, 0

    def spec(q: int) -> ComparatorConfig:
        pattern = PATTERN if variant == "same" else f"{PATTERN}|(never{q}here)"
        return ComparatorConfig(kind="regex", pattern=pattern)

    found = [
        ScenarioSpec(f"q{q}", {}, "A", checks.build(spec(q), f"scenarios[{q}].expect"))
        for q in range(count)
    ]
    return found, default, checks.distinct


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    similarity = SIMILARITIES["text"].build({})
    records = _records(args.questions, args.seeds)
    gc.freeze()
    for round_ in range(args.rounds):
        for variant in ("default", "same", "distinct"):
            start = time.perf_counter()
            questions, default, built = _questions(variant, args.questions)
            judging = time.perf_counter()
            for sc, runs in zip(questions, records, strict=True):
                tally = ScenarioTally(sc, ARMS, "base", args.seeds, default, similarity)
                for run in runs:
                    tally.add(run)
                assess_tally(tally.finish())
            done = time.perf_counter()
            print(
                f"round {round_} {variant:9s} {built:6,} checks built in "
                f"{judging - start:.2f} s; judging {done - judging:.2f} s",
                flush=True,
            )


if __name__ == "__main__":
    main()
