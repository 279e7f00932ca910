"""How sure a verdict is (issue 20 item 1, rule 25): a standing and its reasons on every row."""

from __future__ import annotations

from pathlib import Path

from counterfact import RateLimited, RunContext, RunResult, compare_arms, find_culprits

ARMS = [{"id": "base", "facets": {"model": "small"}}, {"id": "big", "facets": {"model": "large"}}]
KW = {"samples": 8, "reference": "yes", "comparator": "contains", "executor": "local"}


def clean(ctx: RunContext) -> RunResult:
    """Reports its facets; the large model answers 'no' on every seed."""
    answer = "no" if ctx.arm.facets["model"] == "large" else "yes"
    return RunResult(output=answer, manifest={"model": ctx.arm.facets["model"]})


def test_a_clean_fully_checked_row_is_sure_with_no_reasons() -> None:
    # Answer-level comparator, declared reference, every manifest reported and matching, a test
    # that is powered and agrees with the tier: nothing is in doubt.
    result = compare_arms(ARMS, clean, **KW)
    big = result.row("big")
    assert (big.verdict, big.statistical_verdict) == ("confirmed", "significant")
    assert big.standing == "sure" and big.reasons == []
    assert big.claim.startswith("Sure: every check that bears on this verdict ran and passed. ")
    base = result.row("base")
    assert base.standing == "not-assessed" and base.reasons == []
    assert base.claim.startswith("Not assessed: this is the baseline")
    assert result.table().splitlines()[3].endswith("sure")


class Flaky(Exception):
    pass


def test_retried_runs_and_missing_manifests_make_it_not_sure_with_their_seeds() -> None:
    tried: set[tuple[str, int]] = set()

    def runner(ctx: RunContext) -> RunResult:
        key = (ctx.arm.id, ctx.seed)
        if ctx.arm.id == "big" and ctx.seed in (2, 5) and key not in tried:
            tried.add(key)
            raise Flaky("try again")
        out = clean(ctx)
        if ctx.arm.id == "big" and ctx.seed == 3:
            return RunResult(output=out.output)  # no manifest on this run
        return out

    executor = {"kind": "local", "retries": 1, "retry_on": ["Flaky"]}
    result = compare_arms(ARMS, runner, **(KW | {"executor": executor}))
    big = result.row("big")
    assert big.standing == "not-sure"
    reasons = {r.code: r for r in big.reasons}
    assert set(reasons) == {"runs-retried", "manifests-missing"}
    assert reasons["runs-retried"].count == 2 and reasons["runs-retried"].seeds == [2, 5]
    assert "retry bias" in reasons["runs-retried"].detail
    assert reasons["manifests-missing"].seeds == [3]
    assert "rests on 7 runs" in reasons["manifests-missing"].detail
    assert big.claim.startswith("Not sure: runs-retried (2); manifests-missing. ")


def test_silence_is_never_sure() -> None:
    # No manifests at all, no declared reference, a text-level comparator: the checks could not
    # run, and each is a reason.
    def silent(ctx: RunContext) -> str:
        return "no" if ctx.arm.facets["model"] == "large" else "yes"

    result = compare_arms(ARMS, silent, samples=8, comparator="exact", executor="local")
    big = result.row("big")
    codes = {r.code for r in big.reasons}
    assert {"manifest-unchecked", "reference-is-seed0", "text-level-comparator"} <= codes
    assert big.standing == "not-sure"


def test_an_underpowered_test_is_a_reason_and_an_inconclusive_row_is_not_sure() -> None:
    result = compare_arms(ARMS, clean, **(KW | {"samples": 3}))
    big = result.row("big")
    assert big.verdict == "confirmed" and big.statistical_verdict == "underpowered"
    assert {r.code for r in big.reasons} == {"test-underpowered", "tier-test-disagree"}
    arms = [*ARMS, {"id": "off", "facets": {"model": "tiny"}}]

    def ignores(ctx: RunContext) -> RunResult:
        return RunResult(output="yes", manifest={"model": "small"})

    off = compare_arms(arms, ignores, **KW).row("off")
    # Only the baseline and a row without a successful run are not assessed (issue 20 item 1):
    # an inconclusive verdict is not sure, and says first that it is inconclusive.
    assert off.verdict == "inconclusive" and off.standing == "not-sure"
    assert [r.code for r in off.reasons][:1] == ["verdict-inconclusive"]
    assert "arm-not-applied" in off.reasons[0].detail and "test-withheld" in {
        r.code for r in off.reasons
    }
    assert off.claim.startswith("Not sure: verdict-inconclusive; ")


def test_a_row_without_a_successful_run_is_not_assessed() -> None:
    def runner(ctx: RunContext) -> RunResult:
        if ctx.arm.id == "big":
            raise ValueError("never works")
        return clean(ctx)

    big = compare_arms(ARMS, runner, **KW).row("big")
    assert big.standing == "not-assessed" and big.reasons == []
    assert big.claim.startswith("Not assessed: the arm has no successful run")


def test_seed_lists_are_capped_and_say_how_many_more() -> None:
    def runner(ctx: RunContext) -> RunResult:
        if ctx.arm.id == "big" and ctx.seed < 30:
            return RunResult(output="no")  # 30 runs without a manifest
        return clean(ctx)

    result = compare_arms(ARMS, runner, **(KW | {"samples": 40}))
    (missing,) = [r for r in result.row("big").reasons if r.code == "manifests-missing"]
    assert missing.count == 30 and missing.seeds == list(range(20))
    assert missing.seeds_omitted == 10


def test_bisect_json_carries_a_standing(tmp_path: Path) -> None:
    def runner(ctx: RunContext) -> RunResult:
        wrong = "fact:b" not in ctx.arm.ablations
        return RunResult(output="wrong" if wrong else "right")

    result = find_culprits(
        ["fact:a", "fact:b"],
        runner,
        reference="wrong",
        comparator="contains",
        executor="local",
        out=tmp_path / "b",
    )
    rec = result.record
    assert rec.verdict == "confirmed" and rec.culprits == [["fact:b"]]
    assert rec.standing == "sure" and rec.reasons == []
    assert rec.claim.startswith("Sure: ")


def test_a_bisection_with_retried_runs_is_not_sure(tmp_path: Path) -> None:
    tried: set[tuple[str, int]] = set()

    def runner(ctx: RunContext) -> RunResult:
        key = (ctx.arm.id, ctx.seed)
        if ctx.seed == 1 and key not in tried:
            tried.add(key)
            raise Flaky("once")
        return RunResult(output="right" if "fact:b" in ctx.arm.ablations else "wrong")

    result = find_culprits(
        ["fact:a", "fact:b"],
        runner,
        reference="wrong",
        comparator="contains",
        executor={"kind": "local", "retries": 1, "retry_on": ["Flaky"]},
        out=tmp_path / "b",
    )
    rec = result.record
    assert rec.verdict == "confirmed" and rec.standing == "not-sure"
    (retried,) = [r for r in rec.reasons if r.code == "runs-retried"]
    assert retried.count == result.record.probes_executed  # seed 1 of every probe
    assert retried.seeds == [1] and retried.seeds_omitted == 0  # the seed that witnesses it
    assert (
        'in probe(s) ablate:["fact:a","fact:b"]' in retried.detail
        and "and 1 more" in retried.detail
    )


def test_a_bisection_whose_runs_waited_on_a_rate_limit_stays_sure(tmp_path: Path) -> None:
    # Every run is refused once and then answers: no doubt; bisect.json counts the runs.
    refused: set[tuple[str, int]] = set()

    def runner(ctx: RunContext) -> RunResult:
        if (ctx.arm.id, ctx.seed) not in refused:
            refused.add((ctx.arm.id, ctx.seed))
            raise RateLimited("slow down", retry_after=0.01)
        return RunResult(output="right" if "fact:b" in ctx.arm.ablations else "wrong")

    result = find_culprits(
        ["fact:a", "fact:b"],
        runner,
        reference="wrong",
        comparator="contains",
        executor="local",
        out=tmp_path / "b",
    )
    rec = result.record
    assert rec.verdict == "confirmed" and rec.culprits == [["fact:b"]]
    assert (rec.standing, rec.reasons) == ("sure", [])
    assert rec.execution.runs_rate_limited == len(result.runs) == len(refused) > 0
