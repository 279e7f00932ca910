"""A declared facet the manifests do not report (issue 26 item 7): its own reason and a fix in
the words, distinct from a reported value that differs ("did not take effect"); both withhold
the verdict and the test, since without a report the arm's effect cannot be checked.
"""

from __future__ import annotations

from typing import Any

import pytest

from counterfact import RunContext, RunResult, compare_arms
from counterfact.probes.manifest import Application, Mismatch
from counterfact.verdicts.applied import reason_of, what_failed

ARMS = [
    {"id": "base", "facets": {"model": "small", "temperature": 0.0}},
    {"id": "big", "facets": {"model": "large", "temperature": 0.2}},
]
KW: dict[str, Any] = {"samples": 8, "reference": "yes", "comparator": "contains"}


def reporting(*, base: set[str], big: set[str]) -> Any:
    """A runner whose manifests report only the named facets of each arm."""

    def runner(ctx: RunContext) -> RunResult:
        keys = base if ctx.arm.id == "base" else big
        manifest = {k: v for k, v in ctx.arm.facets.items() if k in keys}
        out = "no" if ctx.arm.facets["model"] == "large" else "yes"
        return RunResult(output=out, manifest=manifest)

    return runner


EVERY = {"model", "temperature"}


def test_an_arm_facet_not_reported_says_what_to_report() -> None:
    result = compare_arms(ARMS, reporting(base=EVERY, big={"model"}), executor="local", **KW)
    big = result.row("big")
    assert (big.verdict, big.reason) == ("inconclusive", "arm-facet-not-reported")
    assert big.statistical_verdict_withheld == "arm-facet-not-reported" and big.test is None
    assert (
        "arm 'big' declared temperature=0.2, but its run manifests do not report `temperature`: "
        "report `temperature` in the manifest, or do not declare it." in big.claim
    )
    assert "did not take effect" not in big.claim
    doubt = {r.code: r for r in big.reasons}["facet-not-reported"]
    assert (doubt.count, doubt.seeds) == (8, list(range(8)))
    assert "of the arm's run manifests do not report `temperature`" in doubt.detail
    assert big.standing == "not-sure"


def test_a_baseline_facet_not_reported_withholds_every_challenger() -> None:
    result = compare_arms(ARMS, reporting(base={"model"}, big=EVERY), executor="local", **KW)
    big = result.row("big")
    assert (big.reason, big.statistical_verdict_withheld) == (
        "baseline-facet-not-reported",
        "baseline-facet-not-reported",
    )
    assert "the baseline 'base' declared temperature=0.0, but its run manifests" in big.claim
    assert "(baseline-facet-not-reported)" in result.row("base").claim
    assert "of the baseline's run manifests do not report" in (
        {r.code: r for r in big.reasons}["facet-not-reported"].detail
    )


def test_a_reported_value_that_differs_still_did_not_take_effect() -> None:
    def runner(ctx: RunContext) -> RunResult:
        out = "no" if ctx.arm.id == "big" else "yes"
        return RunResult(output=out, manifest={**ctx.arm.facets, "temperature": 0.0})

    big = compare_arms(ARMS, runner, executor="local", **KW).row("big")
    assert (big.reason, big.statistical_verdict_withheld) == ("arm-not-applied", "arm-not-applied")
    assert "reported 0.0" in big.claim and "The arm did not take effect" in big.claim
    assert "facet-not-reported" not in {r.code for r in big.reasons}


def test_the_test_decided_row_names_the_unreported_gate() -> None:
    result = compare_arms(
        ARMS,
        reporting(base=EVERY, big={"model"}),
        executor="local",
        statistics={"decide": "test"},
        **KW,
    )
    big = result.row("big")
    assert (big.verdict, big.reason) == ("inconclusive", "arm-facet-not-reported")


@pytest.mark.parametrize(
    ("mismatches", "reason", "words"),
    [
        ((Mismatch("t", 0.2),), "arm-facet-not-reported", "do not report `t`: report `t`"),
        ((Mismatch("t", 0.2, 0.7),), "arm-not-applied", "reported 0.7 (mismatched in 3 of 3"),
        ((Mismatch("t", 0.2), Mismatch("m", "x", "y")), "arm-not-applied", "m='x'"),
    ],
)
def test_words_and_reason_follow_the_mismatches(
    mismatches: tuple[Mismatch, ...], reason: str, words: str
) -> None:
    app = Application(True, False, 3, mismatches, manifests_mismatched=3)
    assert reason_of(app, "arm") == reason
    assert words in what_failed("arm 'a'", app)


def test_some_manifests_leaving_a_facet_out_are_counted() -> None:
    app = Application(
        True, False, 5, (Mismatch("t", 0.2), Mismatch("k", 3)), manifests_mismatched=2
    )
    assert what_failed("arm 'a'", app) == (
        "arm 'a' declared t=0.2, k=3, but 2 of its 5 run manifests do not report `t`, `k`: "
        "report `t`, `k` in the manifest, or do not declare them."
    )
