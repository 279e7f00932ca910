"""A culprit search on a program whose answers vary by seed (issue 39 item 1): a 3-seed majority
search on a sampled model claimed noise as culprits and called the result sure."""

from __future__ import annotations

from counterfact.verdicts.bisect.search import Decide, bisect
from counterfact.verdicts.bisect.wording import bisect_claim
from counterfact.verdicts.standing import bisect_doubts, standing_of

from .test_search import Scripted

SUSPECTS = ["a", "b", "c", "d"]


def noisy_b(ids: frozenset[str], seed: int) -> bool:
    """Removing b flips seeds 0 and 1 but not 2: a majority, and a split."""
    return "b" in ids and seed < 2


def test_majority_claims_the_split_set_but_is_not_sure_of_it() -> None:
    outcome = bisect(SUSPECTS, Scripted(noisy_b), samples=3, decide=Decide("majority"))
    assert outcome.culprits == (("b",),) and outcome.asked == "majority"
    assert ("b",) in outcome.noise
    doubts = bisect_doubts(outcome, 3, reference_is_seed0=False, answer_level=True)
    noise = [d for d in doubts if d.code == "noise-unmeasured"]
    assert noise and "{a, b, c, d} flipped on 2 of 3 seeds" in noise[0].detail
    assert standing_of(doubts, assessed=True) == "not-sure"


def test_auto_turns_to_the_test_and_says_three_seeds_cannot_reach_alpha() -> None:
    outcome = bisect(SUSPECTS, Scripted(noisy_b), samples=3, decide=Decide("auto"))
    assert (outcome.verdict, outcome.reason, outcome.culprits) == (
        "inconclusive",
        "underpowered",
        (),
    )
    assert outcome.asked == "auto" and outcome.decide == "test" and ("b",) in outcome.noise
    assert outcome.probes and outcome.probes[0].ablated == ()  # the majority pass's evidence
    claim = bisect_claim(outcome, scenario="s", comparator="exact", samples=3, max_probes=24)
    assert "Decided by the paired test with fresh-seed confirmation (decide: auto)" in claim


def test_auto_stays_with_the_majority_rule_when_every_probe_agrees() -> None:
    outcome = bisect(
        SUSPECTS, Scripted(lambda ids, seed: "c" in ids), samples=3, decide=Decide("auto")
    )
    assert (outcome.culprits, outcome.decide, outcome.noise) == ((("c",),), "majority", ())


def test_a_baseline_that_never_gives_the_reference_is_not_called_unstable() -> None:
    outcome = bisect(SUSPECTS, Scripted(lambda ids, seed: True), samples=3, decide=Decide("auto"))
    claim = bisect_claim(outcome, scenario="s", comparator="exact", samples=3, max_probes=24)
    assert outcome.reason == "unstable-baseline" and "unstable" not in claim
    assert "never matched the reference (0 of 3 seeds)" in claim
    assert "the reference, the comparator, the temperature or the context is wrong" in claim


def test_an_interrupted_auto_search_whose_seeds_split_claims_nothing() -> None:
    """Review finding: a stop (Ctrl-C, failed runs) mid ``auto`` search was read back by the
    majority rule and returned its sets as confirmed, noise included."""
    from counterfact.verdicts.bisect.search import interrupted_outcome

    probes = Scripted(noisy_b)
    whole = bisect(SUSPECTS, probes, samples=3, decide=Decide("majority"))
    done = [(p.ablated, p.stats) for p in whole.probes if not p.cached]
    stopped = interrupted_outcome(done, Decide("auto"), suspects=SUSPECTS, samples=3)
    assert stopped.culprits == () and stopped.noise and stopped.asked == "auto"
    kept = interrupted_outcome(done, Decide("majority"), suspects=SUSPECTS, samples=3)
    assert kept.culprits == (("b",),) and kept.noise  # kept, and noise-unmeasured says why not sure
