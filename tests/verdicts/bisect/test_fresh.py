"""``decide: test``: a held set's 1-minimality re-tested on fresh seeds (issue 27, item 11c).

The scripted program's bug is ``a`` alone; on the search's seeds 0..6 the probe ablating only
``a`` is unlucky (no seed flips, as per-run noise can make it), so ddmin returns ``{a, b}`` and
the search's own 1-minimality check, answered from the cache, passes it. On the fresh seeds
7..13 every probe behaves as the bug says.

Reference values by exact enumeration: 7 discordant pairs all one way give the one-sided exact
McNemar p = 2**-7 = 0.0078125, below both the confirmation's 0.05 / 4 and the re-test's 0.05.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from counterfact.probes.stats import ProbeStats, summarize_probe
from counterfact.verdicts.bisect.search import BisectOutcome, Decide, bisect
from counterfact.verdicts.bisect.wording import bisect_claim
from counterfact.verdicts.standing import bisect_doubts

SAMPLES = 7


def runner(fixed: Callable[[frozenset[str], int], bool]) -> Callable[..., list[ProbeStats]]:
    def run(keys: Sequence[tuple[str, ...]], first_seed: int = 0) -> list[ProbeStats]:
        seeds = list(range(first_seed, first_seed + SAMPLES))
        out = []
        for key in keys:
            flips = [fixed(frozenset(key), s) for s in seeds]
            out.append(summarize_probe(seeds, flips, [1.0] * SAMPLES, [None] * SAMPLES))
        return out

    return run


def unlucky_a(ids: frozenset[str], seed: int) -> bool:
    if ids == {"a"} and seed < SAMPLES:  # the search's seeds: the noise hid a's effect
        return False
    return "a" in ids


def search(fixed: Callable[[frozenset[str], int], bool], max_probes: int = 24) -> BisectOutcome:
    decide = Decide(mode="test", alpha=0.05)
    return bisect(
        list("abcd"), runner(fixed), samples=SAMPLES, max_probes=max_probes, decide=decide
    )


def claim(outcome: BisectOutcome) -> str:
    return bisect_claim(outcome, scenario="s", comparator="exact", samples=SAMPLES, max_probes=24)


def test_a_superfluous_suspect_the_search_seeds_hid_is_caught_on_fresh_seeds() -> None:
    outcome = search(unlucky_a)
    # Before: confirmed {a, b} and claimed "each is 1-minimal", with nothing re-tested.
    assert (outcome.verdict, outcome.culprits) == ("confirmed", (("a", "b"),))
    (check,) = outcome.checks
    assert check.one_minimal  # on the search's seeds
    assert check.fresh is not None and not check.fresh.minimal
    assert check.fresh.flipped == (("a",),)
    assert dict(zip(check.fresh.probes, check.fresh.p_values, strict=True))[("a",)] == 2**-7
    text = claim(outcome)
    assert "{a, b} is not claimed 1-minimal" in text and "{a} flipped without {b}" in text
    codes = [d.code for d in bisect_doubts(outcome, SAMPLES, False, True)]
    assert "minimality-unconfirmed" in codes


def test_a_joint_culprit_stays_1_minimal_on_fresh_seeds() -> None:
    outcome = search(lambda ids, seed: {"a", "b"} <= ids)
    (check,) = outcome.checks
    assert outcome.culprits == (("a", "b"),)
    assert check.fresh is not None and check.fresh.minimal
    assert check.fresh.probes == (("b",), ("a",)) and check.fresh.p_values == (1.0, 1.0)
    assert "Re-tested on the fresh seeds, no one-smaller set flipped" in claim(outcome)
    codes = [d.code for d in bisect_doubts(outcome, SAMPLES, False, True)]
    assert "minimality-unconfirmed" not in codes


def test_no_budget_for_the_re_test_claims_minimality_on_the_search_seeds_only() -> None:
    # The search runs 6 probes and the confirmation 2; the re-test would need 2 more.
    outcome = search(unlucky_a, max_probes=9)
    (check,) = outcome.checks
    assert outcome.verdict == "confirmed" and check.fresh is None and outcome.probes_executed == 8
    assert "minimal on the search's seeds only" in claim(outcome)
    codes = [d.code for d in bisect_doubts(outcome, SAMPLES, False, True)]
    assert "minimality-unconfirmed" in codes


def test_the_re_test_counts_against_the_budget() -> None:
    assert search(unlucky_a).probes_executed == 10
