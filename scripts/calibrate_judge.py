"""A/A false alarms with a noisy model judge, through the engine (issue 40 item 5): how often an
A/A challenger's arm-level verdict reads ``confirmed`` when every flip is the judge's mistake,
and what the judge's recheck reports of its own noise. Every rate with its Wilson 95% interval.

Each sweep is ``compare_arms`` on the in-process executor: a baseline and one A/A challenger (the
same configuration under another name), ``--questions`` questions at ``--seeds`` seeds, every
output the right answer worded its own way (so each is its own judge call), judged by
``comparator: {kind: judge, recheck: 0.1}`` against a loopback stand-in of a judge (the real
``openai`` client, real HTTP) that answers wrongly — DIFFERENT for a right answer — on a share
``error`` of its calls, at random (seeded by the request: its prompt and its ``seed``). Every
flip is the judge's noise, on either arm alike: the arm verdict should be confirmed at most at
alpha (0.05); the recheck asks the judge again with the next seed, so its self-disagreement
should be ``2 error (1 - error)``.

Writes its section of ``docs/statistics.md`` (between ``<!-- judge-noise:start -->`` and
``<!-- judge-noise:end -->``), leaving the rest of the file as it is.

    python scripts/calibrate_judge.py [--sweeps 200] [--out docs/statistics.md]
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docsection import replace_section
from scipy.stats import binomtest

from counterfact import RunContext, RunResult, compare_arms

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.standin import StandIn  # noqa: E402

START, END = "<!-- judge-noise:start -->", "<!-- judge-noise:end -->"
ERRORS = (0.1, 0.3)
ALPHA = 0.05
ARMS = [{"id": "base", "facets": {"v": "a"}}, {"id": "alt", "facets": {"v": "b"}}]
"""A/A: the runner ignores ``v`` (it only reports it): both arms answer alike."""


@dataclass(frozen=True)
class Wilson:
    """Hits over trials, shown with the Wilson 95% interval (``scipy.stats.binomtest``)."""

    hits: int
    n: int

    def __str__(self) -> str:
        if not self.n:
            return "n/a"
        ci = binomtest(self.hits, self.n).proportion_ci(confidence_level=0.95, method="wilson")
        return f"{self.hits / self.n:.3f} [{ci.low:.3f}, {ci.high:.3f}]"


def noisy_judge(error: float, salt: str) -> Any:
    """The stand-in's answer: DIFFERENT (wrong: every answer is right) on a share ``error`` of
    calls, drawn from a hash of the prompt, the call's seed and ``salt``; else SAME.
    """

    def answer(body: dict[str, Any]) -> str:
        key = f"{salt}|{body.get('seed')}|{body['messages'][-1]['content']}"
        draw = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little") / 2**64
        return "DIFFERENT" if draw < error else "SAME"

    return answer


def runner(ctx: RunContext) -> RunResult:
    """The right answer, worded apart for every (sweep, question, arm, seed): each output is its
    own judgment (identical outputs would share one, and their noise), and sweeps are
    independent.
    """
    q, sweep = ctx.scenario.id, ctx.scenario.inputs["sweep"]
    text = f"The capital is Canberra (sweep {sweep}, question {q}, {ctx.arm.id}, take {ctx.seed})."
    return RunResult(output=text, manifest={"v": ctx.arm.facets["v"]})


@dataclass
class Cell:
    """What the sweeps of one judge error rate found."""

    sweeps: int = 0
    confirmed: int = 0
    """A/A challengers whose arm-level verdict read ``confirmed``."""
    significant: int = 0
    """... whose arm-level test was significant."""
    decided: int = 0
    """... whose arm-level test could decide (not ``underpowered``)."""
    rows: int = 0
    rows_confirmed: int = 0
    """Per-question A/A rows whose tier read ``confirmed``."""
    rechecked: int = 0
    disagreed: int = 0
    covered: int = 0
    """Sweeps whose reported self-disagreement interval held ``2 error (1 - error)``."""
    measured: int = 0
    """Sweeps whose judge measured its noise (at least one recheck)."""
    flips: int = 0
    samples: int = 0


def one_sweep(api: StandIn, cell: Cell, questions: int, seeds: int, error: float) -> None:
    scenarios = [
        {"id": f"q{i}", "inputs": {"sweep": cell.sweeps}, "reference": "Canberra."}
        for i in range(questions)
    ]
    comparator = {
        "kind": "judge",
        "model": "noisy-judge",
        "base_url": api.base_url,
        "api_key_env": "JUDGE_KEY",
        "recheck": 0.1,
    }
    result = compare_arms(
        ARMS,
        runner,
        samples=seeds,
        scenarios=scenarios,
        comparator=comparator,
        executor="local",
        runner_version=f"aa-{cell.sweeps}",
    )
    cell.sweeps += 1
    (arm,) = result.summary.arms
    cell.confirmed += arm.verdict == "confirmed"
    cell.significant += arm.statistical_verdict == "significant"
    cell.decided += arm.statistical_verdict not in (None, "underpowered")
    for row in result.rows:
        cell.flips += row.flips or 0
        cell.samples += row.samples
        if not row.is_baseline:
            cell.rows += 1
            cell.rows_confirmed += row.verdict == "confirmed"
    (judge,) = result.summary.judges or []
    cell.rechecked += judge.rechecked
    cell.disagreed += judge.disagreed
    if judge.low is not None and judge.high is not None:
        cell.measured += 1
        cell.covered += judge.low <= 2 * error * (1 - error) <= judge.high


DOC = """{start}
## A/A false alarms with a noisy model judge

Produced by `python scripts/calibrate_judge.py --sweeps {sweeps}` ({sweeps} sweeps a row; the
judge's errors are fixed by a hash of each call, but which judgments are rechecked hashes the
judge's endpoint too, whose port changes between runs, so the *disagreed* column moves a little;
{seconds:.0f} s on a shared 2-core machine). Each sweep runs through the engine
(`compare_arms`, in-process): a baseline and one A/A challenger, {questions} questions at
{seeds} seeds, every output the *right* answer in its own words, judged by `comparator: {{kind:
judge, recheck: 0.1}}` against a loopback stand-in judge (real HTTP, the real `openai` client)
that answers `DIFFERENT` — wrongly — on a share *error* of its calls at random. Every flip is
the judge's mistake, on either arm alike. *Flips*: the share of scored seeds that flipped.
*Arm confirmed*: the challenger's arm-level verdict (the
headline, `arms.jsonl`) read `confirmed`; *arm significant*: its arm-level test was significant,
over the sweeps where it could decide. *Rows confirmed*: per-question A/A rows whose tier read
`confirmed`. *Disagreed*: rechecked judgments (10%) whose second verdict differed,
pooled over the sweeps, against the `2 error (1 - error)` a judge that errs independently on
each call has; *covers*: the share of sweeps whose reported 95% interval held that value. Every
rate with its Wilson 95% interval.

| error | flips | arm confirmed | arm significant | rows confirmed | disagreed (expected) | covers |
|---|---|---|---|---|---|---|
{rows}

{verdict}
{end}"""


def _wilson(hits: int, n: int) -> tuple[float, float]:
    ci = binomtest(hits, n).proportion_ci(confidence_level=0.95, method="wilson")
    return float(ci.low), float(ci.high)


def conclusion(cells: dict[float, Cell]) -> str:
    """Say plainly whether judge noise pushed the false-alarm rate past alpha, and whether the
    recheck reported the judge's noise as it is."""
    rates = "; ".join(
        f"{c.confirmed / c.sweeps:.3f} at judge error {e:g} (interval up to "
        f"{_wilson(c.confirmed, c.sweeps)[1]:.3f})"
        for e, c in cells.items()
    )
    above = [f"{e:g}" for e, c in cells.items() if _wilson(c.confirmed, c.sweeps)[0] > ALPHA]
    if above:
        verdict = (
            f"**Judge noise raises the A/A false-alarm rate past alpha** ({ALPHA:g}) at judge "
            f"error {', '.join(above)}: {rates}. Until that is fixed, do not read an arm "
            "verdict judged by a noisy judge as holding its level."
        )
    else:
        verdict = (
            f"**Judge noise does not push the arm verdict's A/A false-alarm rate past alpha** "
            f"({ALPHA:g}): {rates}; no interval's lower end is above {ALPHA:g}. An error the "
            "judge makes independently on each call lands on either arm alike: it adds flips to "
            "both, and the paired test over questions keeps its level (the noise costs power, "
            "not validity). What this simulation leaves out would break that: a judge whose "
            "errors depend on the arm (it misreads one arm's wording more often: a real "
            "difference in how the outputs read to it, not in what they say). The cache judges "
            "an identical text once, so an A/A pair that "
            "answers in the same words always gets the same judgment. The per-question rows are "
            "tiers, not tests: with a noisy judge some A/A rows read confirmed, as with any "
            "noisy comparator; read the arm verdict, with the judge note beside it."
        )
    noise = "; ".join(
        f"{c.disagreed / max(c.rechecked, 1):.3f} against {2 * e * (1 - e):.3f} at error {e:g}, "
        f"its interval holding the true value in {c.covered} of {c.measured} sweeps"
        for e, c in cells.items()
    )
    return (
        f"{verdict}\n\nThe recheck's self-disagreement, pooled over the sweeps, against the "
        f"`2 error (1 - error)` of a judge erring independently: {noise}."
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=200)
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "statistics.md")
    args = parser.parse_args()
    logging.getLogger("counterfact").setLevel(logging.WARNING)
    os.environ.setdefault("JUDGE_KEY", "none")
    started = time.monotonic()
    cells: dict[float, Cell] = {}
    rows = []
    for error in ERRORS:
        cell = cells[error] = Cell()
        with StandIn(median_s=0.0005, p95_s=0.001, answer=noisy_judge(error, "aa")) as api:
            for _ in range(args.sweeps):
                one_sweep(api, cell, args.questions, args.seeds, error)
        expected = 2 * error * (1 - error)
        rows.append(
            f"| {error:g} | {cell.flips / max(cell.samples, 1):.3f} "
            f"| {Wilson(cell.confirmed, cell.sweeps)} "
            f"| {Wilson(cell.significant, cell.decided)} "
            f"| {Wilson(cell.rows_confirmed, cell.rows)} "
            f"| {Wilson(cell.disagreed, cell.rechecked)} ({expected:.3f}) "
            f"| {Wilson(cell.covered, cell.measured)} |"
        )
        print(rows[-1], flush=True)
    section = DOC.format(
        start=START,
        end=END,
        sweeps=args.sweeps,
        seconds=time.monotonic() - started,
        questions=args.questions,
        seeds=args.seeds,
        rows="\n".join(rows),
        verdict=conclusion(cells),
    )
    replace_section(args.out, START, END, section)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
