"""Bisection under noise (rule 20): decide: test finds a two-item culprit under a 10%
baseline flip rate, where the reference's majority rule ends inconclusive."""

from __future__ import annotations

import json
import random
from pathlib import Path

from counterfact import RunContext, find_culprits
from counterfact.orchestrator.drivers.gating.states import bisect_hits


def noisy_agent(ctx: RunContext) -> str:
    """Wrong ('bad') while x or y is present; each run flips at random 10% of the time."""
    fixed = {"x", "y"} <= set(ctx.arm.ablations)
    noise = random.Random(f"{sorted(ctx.arm.ablations)}/{ctx.seed}").random() < 0.1
    return "good" if fixed != noise else "bad"


KW = {"samples": 20, "reference": "bad", "comparator": "exact", "executor": "local"}


def test_majority_ends_inconclusive_on_a_noisy_baseline() -> None:
    result = find_culprits(["w", "x", "z", "y"], noisy_agent, decide="majority", **KW)  # type: ignore[arg-type]
    assert (result.record.verdict, result.record.reason) == ("inconclusive", "unstable-baseline")
    assert result.record.noise_seen == [[]] and result.record.decide_asked == "majority"


def test_the_default_turns_to_the_test_when_the_baseline_s_seeds_split() -> None:
    """Issue 39 item 1: under the old default (majority) this noisy program's search stopped at
    its baseline, and on a sampled model a 3-seed majority search claimed noise as culprits;
    ``auto`` reads the split seeds as noise and decides by the paired test."""
    result = find_culprits(["w", "x", "z", "y"], noisy_agent, **KW)  # type: ignore[arg-type]
    rec = result.record
    assert (rec.verdict, rec.decide, rec.decide_asked) == ("confirmed", "test", "auto")
    assert [sorted(c) for c in rec.culprits] == [["x", "y"]] and [] in rec.noise_seen
    assert "Decided by the paired test with fresh-seed confirmation (decide: auto)" in rec.claim


def test_decide_test_finds_the_pair_and_confirms_it_on_fresh_seeds() -> None:
    result = find_culprits(["w", "x", "z", "y"], noisy_agent, decide="test", **KW)  # type: ignore[arg-type]
    rec = result.record
    assert (rec.verdict, rec.reason, rec.decide) == ("confirmed", "culprits-found", "test")
    assert [sorted(c) for c in rec.culprits] == [["x", "y"]]
    (check,) = rec.confirmations
    assert check.confirmed and check.first_seed == 20 and check.alpha == 0.05 / 4
    assert check.p_value <= check.alpha
    assert all(p.p_value is not None and p.n10 is not None for p in rec.probes if p.ablated)
    fresh = {r.seed for r in result.runs if r.seed >= 20}
    assert fresh == set(range(20, 40))  # the confirmation ran on seeds 20..39
    assert "held on fresh seeds" in rec.claim
    # Its 1-minimality re-tested on the fresh seeds: neither one-smaller set flipped there.
    (minimal,) = rec.culprit_checks
    assert minimal.minimal_on_fresh and minimal.fresh_probes == [["y"], ["x"]]
    solo = {r.seed for r in result.runs if r.arm in ('ablate:["x"]', 'ablate:["y"]')}
    assert solo >= set(range(20, 40))


def test_the_confirmation_counts_against_the_probe_budget() -> None:
    # The search alone needs 9 probes here; its confirmation 2 more: 10 is not enough.
    result = find_culprits(["w", "x", "z", "y"], noisy_agent, decide="test", max_probes=10, **KW)  # type: ignore[arg-type]
    assert (result.record.verdict, result.record.reason) == ("inconclusive", "budget-exhausted")
    assert result.record.culprits == [] and result.record.probes_executed <= 10


def test_too_few_samples_end_underpowered_with_the_samples_needed(tmp_path: Path) -> None:
    # 6 samples: the confirmation's best p is 2**-6 = 0.0156 > 0.05 / 4 (exact enumeration);
    # before, the search ran and ended "unconfirmed" (no set held on fresh seeds).
    kw = KW | {"samples": 6}
    result = find_culprits(  # type: ignore[misc]
        ["w", "x", "z", "y"], noisy_agent, decide="test", out=tmp_path / "b", **kw
    )
    data = json.loads((tmp_path / "b" / "bisect.json").read_text())
    assert (data["verdict"], data["reason"], data["samples_needed"]) == (
        "inconclusive",
        "underpowered",
        7,
    )
    assert data["execution"]["runs_used"] == 0 and data["probes"] == []
    assert "underpowered" in data["claim"] and "raise samples to at least 7" in data["claim"]
    assert [r["code"] for r in data["reasons"]][:1] == ["test-underpowered"]
    assert "underpowered" in result.table()
    # The gate matches the verdict, and an underpowered reason: both gates fire.
    assert [str(h) for h in bisect_hits(result.record, ["inconclusive"])] == [
        "bisection: inconclusive"
    ]
    assert [str(h) for h in bisect_hits(result.record, ["underpowered"])] == [
        "bisection: underpowered"
    ]


def test_stop_early_decides_every_probe_as_all_its_seeds_would_for_fewer_runs(
    tmp_path: Path,
) -> None:
    """``bisect.stop_early``: the same search (each probe's decision, the set, its confirmation)
    for fewer runs; a probe that stopped early says so and rests on fewer seeds; the record
    says the option was on, and reads back as it was written."""
    from counterfact.records import read_bisect

    full = find_culprits(["w", "x", "z", "y"], noisy_agent, decide="test", **KW)  # type: ignore[arg-type]
    early = find_culprits(
        ["w", "x", "z", "y"],
        noisy_agent,
        decide="test",
        stop_early=True,
        out=tmp_path / "b",
        **KW,  # type: ignore[arg-type]
    )
    a, b = full.record, early.record
    assert (b.verdict, b.culprits) == (a.verdict, a.culprits) == ("confirmed", [["x", "y"]])
    assert [(p.ablated, p.flipped) for p in b.probes] == [(p.ablated, p.flipped) for p in a.probes]
    assert [c.confirmed for c in b.confirmations] == [c.confirmed for c in a.confirmations]
    assert b.culprit_checks[0].minimal_on_fresh == a.culprit_checks[0].minimal_on_fresh
    assert b.execution.runs_used < a.execution.runs_used
    stopped = [p for p in b.probes if p.decided_early]
    assert stopped and all(p.samples < 20 and p.ablated for p in stopped)
    assert not b.probes[0].decided_early and b.probes[0].samples == 20  # the baseline: all
    assert b.stop_early and not a.stop_early and not any(p.decided_early for p in a.probes)
    assert read_bisect(tmp_path / "b") == b


def test_a_resumed_curtailed_search_reads_its_runs_back_and_runs_nothing(tmp_path: Path) -> None:
    kw = dict(KW, decide="test", stop_early=True, out=tmp_path / "b")
    first = find_culprits(["w", "x", "z", "y"], noisy_agent, **kw)  # type: ignore[arg-type]
    again = find_culprits(["w", "x", "z", "y"], noisy_agent, **kw)  # type: ignore[arg-type]
    assert (
        again.record.execution.runs_used == 0
        and again.record.execution.runs_reused == first.record.execution.runs_used
    )
    assert again.record.culprits == first.record.culprits
