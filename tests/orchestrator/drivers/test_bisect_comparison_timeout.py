"""A culprit search whose regex cannot search an output in time (issue 27): that seed's
comparison failed, as a failed run would have; the search ends with its record written and the
seed named, never with the comparator's error.
"""

from __future__ import annotations

import json
from pathlib import Path

from counterfact import RunContext, find_culprits

HOSTILE = "a" * 36 + "!"
"""Backtracks 2^36 times under ``(a|a)+$``: the search outlasts the deadline."""
ALL_ABLATED = 'ablate:["fact:a","fact:b","fact:c"]'


def runner(ctx: RunContext) -> str:
    if len(ctx.arm.ablations) == 3 and ctx.seed == 1:
        return HOSTILE
    return "x b" if "fact:c" in ctx.arm.ablations else "x aaa"


def test_a_timed_out_output_is_a_failed_comparison_of_its_probe(tmp_path: Path) -> None:
    result = find_culprits(
        ["fact:a", "fact:b", "fact:c"],
        runner,
        samples=3,
        reference="aaa",
        comparator={"kind": "regex", "pattern": "(a|a)+$"},
        executor="local",
        out=tmp_path / "b",
    )
    assert (result.verdict, result.reason, result.culprits) == ("inconclusive", "runs-failed", [])
    assert [(p.ablated, p.samples) for p in result.probes] == [
        ([], 3),
        (["fact:a", "fact:b", "fact:c"], 2),  # seed 1 is not a sample: it was not judged
    ]
    assert all(r.ok for r in result.runs) and len(result.runs) == 6
    doubt = next(d for d in result.record.reasons if d.code == "comparison-timed-out")
    assert (doubt.count, doubt.seeds) == (1, [1])
    assert "comparator.pattern" in doubt.detail and ALL_ABLATED in doubt.detail
    # the timeout's own message, as a sweep's doubt gives it: the pattern and the output's length
    assert "the pattern /(a|a)+$/ took more than" in doubt.detail
    assert f"a {len(HOSTILE)}-character output" in doubt.detail
    assert "could not be compared with the reference in time" in result.claim
    data = json.loads((tmp_path / "b" / "bisect.json").read_text())
    assert data["verdict"] == "inconclusive" and data["execution"]["status"] == "complete"
    assert "comparison-timed-out" in [r["code"] for r in data["reasons"]]


def test_outputs_judged_in_time_still_decide_the_search() -> None:
    def clean(ctx: RunContext) -> str:
        return "x b" if "fact:c" in ctx.arm.ablations else "x aaa"

    result = find_culprits(
        ["fact:a", "fact:b", "fact:c"],
        clean,
        samples=3,
        reference="aaa",
        comparator={"kind": "regex", "pattern": "(a|a)+$"},
        executor="local",
    )
    assert (result.verdict, result.culprits) == ("confirmed", [["fact:c"]])
    assert "comparison-timed-out" not in [d.code for d in result.record.reasons]
