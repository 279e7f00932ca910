"""Placebo arms (rule 17): an A/A rerun of the baseline's configuration under its own id."""

from __future__ import annotations

import pytest

from counterfact import RefusalError, RunContext, compare_arms


def seeded(ctx: RunContext) -> dict[str, object]:
    # Seed-controlled: the same configuration gives the same answer on the same seed.
    answer = "yes" if ctx.seed % 4 else "maybe"
    return {"output": answer, "manifest": {"model": ctx.arm.facets.get("model")}}


def test_a_placebo_reruns_the_baseline_and_is_not_significant() -> None:
    seen: list[tuple[str, object]] = []

    def runner(ctx: RunContext) -> dict[str, object]:
        seen.append((ctx.arm.id, ctx.arm.facets.get("model")))
        return seeded(ctx)

    result = compare_arms(
        [{"id": "base", "facets": {"model": "small"}}, {"id": "aa", "placebo": True}],
        runner,
        samples=8,
        reference="yes",
        comparator="exact",
        executor="local",
    )
    assert ("aa", "small") in seen  # the runner got the baseline's facets
    aa = result.row("aa")
    assert aa.intervention == "placebo" and aa.application.checked and aa.application.applied
    assert aa.test is not None and (aa.test.n10, aa.test.n01) == (0, 0)
    assert aa.statistical_verdict == "not-significant"
    assert "rerunning the baseline's configuration as 'aa'" in aa.claim


def test_a_placebo_is_checked_against_the_baseline_manifest() -> None:
    def wrong(ctx: RunContext) -> dict[str, object]:
        model = "large" if ctx.arm.id == "aa" else "small"  # the placebo did not take effect
        return {"output": "yes", "manifest": {"model": model}}

    result = compare_arms(
        [{"id": "base", "facets": {"model": "small"}}, {"id": "aa", "placebo": True}],
        wrong,
        samples=4,
        reference="yes",
        comparator="exact",
        executor="local",
    )
    assert result.row("aa").reason == "arm-not-applied"


def test_a_placebo_that_declares_facets_is_refused() -> None:
    with pytest.raises(RefusalError, match=r"arms\[1\]: placebo arm 'aa' reruns the baseline"):
        compare_arms(
            [{"id": "base"}, {"id": "aa", "placebo": True, "facets": {"model": "x"}}],
            seeded,
            executor="local",
        )


def test_the_baseline_cannot_be_a_placebo() -> None:
    with pytest.raises(RefusalError, match=r"arms\[0\]\.placebo: the baseline cannot be a placebo"):
        compare_arms(
            [{"id": "base", "placebo": True}, {"id": "b", "facets": {"m": 1}}],
            seeded,
            executor="local",
        )


def test_two_placebos_are_not_the_same_configuration() -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "aa1", "placebo": True}, {"id": "aa2", "placebo": True}],
        seeded,
        samples=3,
        reference="yes",
        comparator="exact",
        executor="local",
    )
    assert [r.arm for r in result.rows] == ["base", "aa1", "aa2"]


def not_seeded(ctx: RunContext) -> dict[str, object]:
    # Stands in for a program its seed does not control (an unseeded RNG, a remote model's
    # sampling): on seeds 1 and 5 the rerun under the placebo's id answers otherwise.
    odd = ctx.arm.id == "aa" and ctx.seed in (1, 5)
    return {"output": "maybe" if odd else seeded(ctx)["output"]}


def test_a_placebo_whose_same_seed_pairs_disagree_fails_the_determinism_check() -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "aa", "placebo": True}],
        not_seeded,
        samples=8,
        reference="yes",
        comparator="exact",
        executor="local",
    )
    aa = result.row("aa")
    (doubt,) = [d for d in aa.reasons if d.code == "placebo-not-deterministic"]
    assert (doubt.count, doubt.seeds) == (2, [1, 5])
    assert "not controlled by its seed" in doubt.detail
    assert aa.standing == "not-sure"
    assert "Determinism check failed: on 2 seed(s) (seeds [1, 5])" in aa.claim


def test_a_seeded_placebo_and_a_fresh_placebo_raise_no_determinism_doubt() -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "aa", "placebo": True}, {"id": "ff", "placebo": "fresh"}],
        not_seeded,  # 'ff' sees other seeds: its pairs are not expected to agree
        samples=8,
        reference="yes",
        comparator="exact",
        executor="local",
    )
    codes = {r.arm: [d.code for d in r.reasons] for r in result.rows}
    assert "placebo-not-deterministic" not in codes["ff"]
    seeded_only = compare_arms(
        [{"id": "base"}, {"id": "aa", "placebo": True}],
        seeded,
        samples=8,
        reference="yes",
        comparator="exact",
        executor="local",
    )
    assert all(d.code != "placebo-not-deterministic" for d in seeded_only.row("aa").reasons)
    assert "Determinism check" not in seeded_only.row("aa").claim
