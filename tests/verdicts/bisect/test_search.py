"""rule 10, clause by clause, on the pure search with scripted probes.

A scripted program answers "wrong" while its bug is present; a probe flips when ablating its ids
makes it answer "right" on a majority of seeds (the baseline: on any seed).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from counterfact.probes.stats import ProbeStats, summarize_probe
from counterfact.verdicts.bisect.search import BisectOutcome, bisect

Fixed = Callable[[frozenset[str], int], bool]
"""(ablated ids, seed) -> True when the answer is fixed (the probe's run flipped)."""


class Scripted:
    def __init__(
        self, fixed: Fixed, samples: int = 3, fail: Callable[[frozenset[str]], bool] | None = None
    ) -> None:
        self.fixed = fixed
        self.samples = samples
        self.fail = fail
        self.calls: list[tuple[str, ...]] = []
        self.batches: list[int] = []

    def __call__(self, keys: Sequence[tuple[str, ...]]) -> list[ProbeStats]:
        self.batches.append(len(keys))
        out = []
        for key in keys:
            self.calls.append(key)
            ids = frozenset(key)
            seeds = [
                s for s in range(self.samples) if not (self.fail and self.fail(ids) and s == 0)
            ]
            flips = [self.fixed(ids, s) for s in seeds]
            out.append(
                summarize_probe(
                    seeds, flips, [0.0 if f else 1.0 for f in flips], [None] * len(seeds)
                )
            )
        return out


def run(suspects: Sequence[str], fixed: Fixed, **kw: object) -> tuple[BisectOutcome, Scripted]:
    probes = Scripted(fixed)
    outcome = bisect(suspects, probes, samples=3, **kw)  # type: ignore[arg-type]
    return outcome, probes


def removed(*needed: str) -> Fixed:
    """Fixed once every id in ``needed`` is ablated (joint culprit)."""
    return lambda ids, seed: set(needed) <= ids


def any_removed(*ids_: str) -> Fixed:
    """Fixed once any of ``ids_`` is ablated (independent culprits)."""
    return lambda ids, seed: bool(set(ids_) & ids)


def executed(o: BisectOutcome) -> list[list[str]]:
    return [list(p.ablated) for p in o.probes if not p.cached]


def test_single_culprit() -> None:
    o, probes = run(["a", "b", "c", "d"], removed("c"))
    assert (o.verdict, o.reason, o.culprits) == ("confirmed", "culprits-found", (("c",),))
    # baseline, reproduction gate, first half, second half, c alone, the remainder.
    assert executed(o) == [[], ["a", "b", "c", "d"], ["a", "b"], ["c", "d"], ["c"], ["a", "b", "d"]]
    assert o.probes_executed == len(probes.calls) == 6


def test_culprit_ranked_last() -> None:
    o, _ = run(["a", "b", "c", "d", "e"], removed("e"))
    assert o.culprits == (("e",),)
    assert executed(o)[2:5] == [["a", "b", "c"], ["d", "e"], ["d"]]


def test_joint_culprits_both_needed() -> None:
    # Redundant causes: each alone keeps the wrong answer; only removing both fixes it.
    o, _ = run(["x", "a", "b", "y"], removed("x", "y"))
    assert o.culprits == (("x", "y"),)
    assert o.verdict == "confirmed"


def test_interference_between_halves() -> None:
    o, _ = run(["x", "y"], removed("x", "y"))
    # Neither half flips alone; each is minimised with the other as context.
    assert executed(o) == [[], ["x", "y"], ["x"], ["y"]]
    assert o.culprits == (("x", "y"),)


def test_three_way_interference() -> None:
    o, _ = run(["x", "a", "y", "b", "z", "c"], removed("x", "y", "z"))
    assert o.verdict == "confirmed"
    assert o.culprits == (("x", "y", "z"),)
    final = [p for p in o.probes if sorted(p.ablated) == ["x", "y", "z"]]
    assert final and all(p.flipped for p in final)


def test_independent_culprits_in_order() -> None:
    # Two independent causes: removing either one fixes the answer.
    o, _ = run(["a", "c", "b", "d"], any_removed("a", "b"))
    assert o.culprits == (("a",), ("b",))
    # After each round the remainder is probed; the search stops when it no longer flips.
    assert executed(o)[-1] == ["c", "d"]


def test_max_culprits_caps_rounds() -> None:
    o, _ = run(["a", "b", "c", "d"], any_removed("a", "b", "c"), max_culprits=2)
    assert o.culprits == (("a",), ("b",))
    assert o.verdict == "confirmed"


def test_not_reproducible() -> None:
    o, probes = run(["a", "b"], lambda ids, seed: False)
    assert (o.verdict, o.reason, o.culprits) == ("not-reproducible", "not-reproducible", ())
    assert len(probes.calls) == 2


def test_no_suspects_is_not_reproducible() -> None:
    o, probes = run([], removed("c"))
    assert o.verdict == "not-reproducible" and len(probes.calls) == 1


def test_unstable_baseline_one_flip_in_three() -> None:
    # Zero tolerance: seed 1 of 3 flips with nothing ablated; majority would call it stable.
    o, probes = run(["a", "b"], lambda ids, seed: bool(ids) or seed == 1)
    assert (o.verdict, o.reason, o.culprits) == ("inconclusive", "unstable-baseline", ())
    assert probes.calls == [()]


def test_budget_exactly_enough() -> None:
    o, _ = run(["a", "b", "c", "d"], removed("c"), max_probes=6)
    assert o.verdict == "confirmed" and o.probes_executed == 6


def test_budget_one_short_keeps_the_set_found() -> None:
    # {c} is found with the 5th probe; the 6th (is anything left in {a, b, d}?) has no budget.
    o, probes = run(["a", "b", "c", "d"], removed("c"), max_probes=5)
    assert (o.verdict, o.reason, o.culprits) == ("confirmed", "budget-exhausted", (("c",),))
    assert not o.search_complete
    assert len(probes.calls) == 5


def test_budget_out_before_any_set_gives_no_culprit() -> None:
    o, _ = run(["a", "b", "c", "d"], removed("c"), max_probes=4)
    assert (o.verdict, o.reason, o.culprits) == ("inconclusive", "budget-exhausted", ())


def test_budget_counts_the_baseline() -> None:
    o, probes = run(["a"], removed("a"), max_probes=1)
    assert o.reason == "budget-exhausted" and probes.calls == [()]


def test_cache_hit_costs_nothing() -> None:
    o, probes = run(["a", "b", "c"], removed("c"))
    # The remainder {a, b} equals the first half probed earlier: answered from the cache.
    assert [(list(p.ablated), p.cached) for p in o.probes][-1] == (["a", "b"], True)
    assert len(probes.calls) == o.probes_executed == 4
    assert len(o.probes) == 5


def test_cache_is_keyed_by_the_sorted_set() -> None:
    o, probes = run(["b", "a", "c"], removed("c"))
    assert len(probes.calls) == len(set(probes.calls))
    assert o.probes[-1].cached and sorted(o.probes[-1].ablated) == ["a", "b"]


def test_runs_failed_ends_inconclusive() -> None:
    probes = Scripted(removed("c"), fail=lambda ids: ids == frozenset({"c", "d"}))
    o = bisect(["a", "b", "c", "d"], probes, samples=3)
    assert (o.verdict, o.reason, o.culprits) == ("inconclusive", "runs-failed", ())


def test_speculative_finds_the_same_and_runs_halves_together() -> None:
    seq, seq_probes = run(["a", "b", "c", "d", "e", "f"], removed("e"))
    spec, spec_probes = run(["a", "b", "c", "d", "e", "f"], removed("e"), speculative=True)
    assert spec.culprits == seq.culprits == (("e",),)
    assert 2 in spec_probes.batches  # a split probed both halves at once
    assert len(spec_probes.batches) < len(seq_probes.batches)  # fewer sequential steps
    assert spec.probes_executed >= seq.probes_executed
    assert any(p.speculative for p in spec.probes)


def test_speculative_counts_unused_probes() -> None:
    # First half flips at once: the speculatively run second half is never needed.
    o, _ = run(["a", "b", "c", "d"], removed("a"), speculative=True)
    assert o.culprits == (("a",),)
    assert o.speculative_unused >= 1


def test_speculation_never_overspends_the_budget() -> None:
    o, probes = run(["a", "b", "c", "d"], removed("c"), speculative=True, max_probes=3)
    assert len(probes.calls) <= 3
    assert o.reason == "budget-exhausted"


def test_no_remainder_probe_after_the_last_allowed_culprit() -> None:
    # Reached max_culprits: probing the remainder could only spend budget.
    o, probes = run(["a", "b", "c", "d"], removed("a"), max_culprits=1, max_probes=4)
    assert (o.verdict, o.culprits) == ("confirmed", (("a",),))
    assert probes.calls == [(), ("a", "b", "c", "d"), ("a", "b"), ("a",)]


def test_an_interrupted_test_mode_search_reads_probes_by_their_test() -> None:
    import pytest

    from counterfact.probes.stats import summarize_probe
    from counterfact.verdicts.bisect.search import Decide, interrupted_outcome

    def stats(flipped: list[int]) -> object:
        n = 10
        return summarize_probe(
            list(range(n)), [s in flipped for s in range(n)], [1.0] * n, [None] * n
        )

    # n10 = 7 (seeds 0-2, 4-7), n01 = 1 (seed 3): p = P(Bin(8, 1/2) >= 7) = 9/256
    base, probe = stats([3]), stats([0, 1, 2, 4, 5, 6, 7])
    out = interrupted_outcome([((), base), (("x",), probe)], Decide(mode="test", alpha=0.05))  # type: ignore[list-item]
    assert [p.flipped for p in out.probes] == [False, True]
    assert out.probes[1].p_value == pytest.approx(9 / 256)
    majority = interrupted_outcome([((), base), (("x",), probe)])  # type: ignore[list-item]
    assert majority.probes[0].flipped  # zero tolerance: the baseline's one flip counts


def test_not_reproducible_in_test_mode_speaks_of_the_test() -> None:
    from counterfact.verdicts.bisect.search import Decide
    from counterfact.verdicts.bisect.wording import bisect_claim

    probes = Scripted(lambda ids, seed: False, samples=8)
    outcome = bisect(["a", "b"], probes, samples=8, decide=Decide(mode="test"))
    assert (outcome.verdict, outcome.decide) == ("not-reproducible", "test")
    claim = bisect_claim(outcome, scenario="s", comparator="exact match", samples=8, max_probes=24)
    assert "significantly more often than the baseline (paired test)" in claim
    assert "majority" not in claim
