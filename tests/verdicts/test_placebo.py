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
