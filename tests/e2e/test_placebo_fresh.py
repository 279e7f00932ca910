"""``placebo: fresh`` (issue 19 item 3): an A/A arm on fresh seeds, paired by seed index."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from counterfact import ConfigError, RunContext, compare_arms
from counterfact.defaults import FRESH_SEED_STRIDE
from counterfact.orchestrator.drivers.outputs.report import write_report


def seeded(ctx: RunContext) -> str:
    """A program whose randomness is its seed (as the README advises): flips 30% of seeds."""
    return "B" if random.Random(ctx.seed).random() < 0.3 else "A"


ARMS = [
    {"id": "base"},
    {"id": "same", "placebo": True},
    {"id": "fresh", "placebo": "fresh"},
    {"id": "fresh2", "placebo": "fresh"},
]


def test_fresh_placebo_draws_new_seeds_and_pairs_by_index(tmp_path: Path) -> None:
    seen: dict[str, set[int]] = {}

    def runner(ctx: RunContext) -> str:
        seen.setdefault(ctx.arm.id, set()).add(ctx.seed)
        return seeded(ctx)

    result = compare_arms(
        ARMS,
        runner,
        samples=40,
        reference="A",
        comparator="exact",
        executor="local",
        out=tmp_path / "o",
    )
    assert seen["base"] == seen["same"] == set(range(40))
    assert seen["fresh"] == {FRESH_SEED_STRIDE + i for i in range(40)}
    assert seen["fresh2"] == {2 * FRESH_SEED_STRIDE + i for i in range(40)}
    # A seeded program answers identically on the baseline's own seeds: nothing to test.
    same = result.row("same")
    assert same.placebo == "same-seeds" and same.test is not None
    assert (same.test.n10, same.test.n01) == (0, 0)
    assert "determinism check" in same.claim
    # On fresh seeds its runs are independent draws: discordant pairs exist, and the test
    # (not significant here) is a real false-alarm check.
    fresh = result.row("fresh")
    assert fresh.placebo == "fresh-seeds" and fresh.test is not None
    assert fresh.test.n10 + fresh.test.n01 > 0
    assert "on fresh seeds" in fresh.claim
    # The records keep the seed index (pairing) and the seed the runner got.
    records = [
        json.loads(line) for line in (tmp_path / "o" / "runs.jsonl").read_text().splitlines()
    ]
    mine = sorted((r["seed"], r["runner_seed"]) for r in records if r["arm"] == "fresh")
    assert mine == [(i, FRESH_SEED_STRIDE + i) for i in range(40)]
    assert all(r["runner_seed"] is None for r in records if r["arm"] in ("base", "same"))
    # The report says which kind ran, in each placebo arm's own section.
    text = write_report(tmp_path / "o").read_text(encoding="utf-8")
    sections = {
        arm: text[text.index(f'data-arm="{arm}"><h3>') :].split("</section>", 1)[0]
        for arm in ("same", "fresh")
    }
    assert "determinism check" in sections["same"] and "on fresh seeds" in sections["fresh"]


def test_fresh_placebo_a_a_rate_stays_under_alpha() -> None:
    # 60 sweeps x 2 fresh placebos on a seeded 30% flipper, 20 seeds each: false-significant
    # under 0.05 (the full calibration is scripts/calibrate.py's placebo section). The exact
    # test at 20 pairs is conservative, so the count is small; more than 9 of 120 (7.5%) would
    # be beyond the binomial upper 95% bound for a 5% rate.
    hits = 0
    for sweep in range(60):

        def runner(ctx: RunContext, sweep: int = sweep) -> str:
            return "B" if random.Random(f"{sweep}/{ctx.seed}").random() < 0.3 else "A"

        result = compare_arms(
            [ARMS[0], ARMS[2], ARMS[3]],
            runner,
            samples=20,
            reference="A",
            comparator="exact",
            executor="local",
        )
        hits += sum(r.statistical_verdict == "significant" for r in result.rows if r.placebo)
    assert hits <= 9


def test_a_fresh_placebo_declares_nothing_itself() -> None:
    with pytest.raises(ConfigError, match=r"reruns the baseline's configuration"):
        compare_arms(
            [{"id": "base"}, {"id": "f", "placebo": "fresh", "facets": {"model": "x"}}],
            seeded,
            samples=4,
            reference="A",
            executor="local",
        )


def test_an_unknown_placebo_kind_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"placebo"):
        compare_arms(
            [{"id": "base"}, {"id": "f", "placebo": "new"}],
            seeded,
            samples=4,
            reference="A",
            executor="local",
        )
