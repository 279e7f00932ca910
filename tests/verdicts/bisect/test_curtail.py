"""``bisect.stop_early``: a probe stops only where every outcome of its remaining seeds gives the
decision the full n gives, checked by enumerating every outcome."""

from __future__ import annotations

from itertools import product

import pytest

from counterfact.verdicts.bisect.curtail import Rule, more_seeds, settled

RULES = [
    Rule("majority", tuple(range(7))),
    Rule("majority", tuple(range(8))),
    Rule("test", tuple(range(9)), 0.05),
    Rule("test", tuple(range(9)), 0.05, frozenset({2, 7})),
    Rule("test", tuple(range(9)), 0.0125, frozenset({0, 4}), exclude_seed0=True),
    Rule("test", tuple(range(20, 29)), 0.05, frozenset({21})),  # fresh seeds
]


def _outcomes(seeds: tuple[int, ...]) -> list[dict[int, bool]]:
    return [
        dict(zip(seeds, bits, strict=True)) for bits in product((False, True), repeat=len(seeds))
    ]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: f"{r.mode}-{sorted(r.base_flipped)}")
def test_a_settled_probe_has_the_full_n_decision_whatever_its_other_seeds_say(rule: Rule) -> None:
    """For every prefix of the seeds and every outcome of it: when ``settled`` names a decision,
    every outcome of the remaining seeds gives that decision at the full n; when it names none,
    two of them differ (so it stops as soon as stopping is safe)."""
    stops = 0
    for k in range(len(rule.seeds) + 1):
        head, rest = rule.seeds[:k], rule.seeds[k:]
        for drawn in _outcomes(head):
            full = {rule.decides({**drawn, **tail}) for tail in _outcomes(rest)}
            decision = settled(rule, drawn)
            if decision is None:
                assert len(full) == 2, (drawn, full)
            else:
                assert full == {decision}, (drawn, decision)
                stops += k < len(rule.seeds)
    assert stops > 0  # some prefix does stop early


@pytest.mark.parametrize("rule", RULES, ids=lambda r: f"{r.mode}-{sorted(r.base_flipped)}")
def test_a_wave_is_the_fewest_seeds_that_could_fix_the_decision(rule: Rule) -> None:
    """``more_seeds`` asks for r seeds: no outcome of fewer fixes the decision, some of r does
    (or r is every seed left); so drawing the wave at once costs no seed that one at a time
    would not."""
    for k in range(len(rule.seeds)):
        head, rest = rule.seeds[:k], rule.seeds[k:]
        for drawn in _outcomes(head):
            r = more_seeds(rule, drawn)
            if settled(rule, drawn) is not None:
                assert r == 0
                continue
            assert 1 <= r <= len(rest)
            fixes = [
                any(settled(rule, {**drawn, **nxt}) is not None for nxt in _outcomes(rest[:j]))
                for j in (r - 1, r)
            ]
            assert not fixes[0] and (fixes[1] or r == len(rest)), (drawn, r)


def test_a_probe_that_flips_on_every_seed_stops_at_the_critical_count() -> None:
    """12 seeds, a baseline that never flipped, alpha 0.05: the one-sided exact McNemar p after
    n flips on n pairs is 0.5**n, first at most 0.05 at n = 5 (0.03125; 0.0625 at 4), so five
    flips fix "flipped"; a probe that holds is fixed once the held seeds left can no longer
    reach five flips: after 8 seeds (4 left)."""
    rule = Rule("test", tuple(range(12)), 0.05)
    assert more_seeds(rule, {}) == 5
    assert settled(rule, dict.fromkeys(range(5), True)) is True
    assert settled(rule, dict.fromkeys(range(4), True)) is None
    assert settled(rule, dict.fromkeys(range(8), False)) is False
    assert settled(rule, dict.fromkeys(range(7), False)) is None


def test_the_majority_rule_stops_once_half_is_out_of_reach() -> None:
    """5 seeds: three flips fix "flipped"; three holds fix "held" (two flips at most)."""
    rule = Rule("majority", tuple(range(5)))
    assert settled(rule, {0: True, 1: True, 2: True}) is True
    assert settled(rule, {0: False, 1: False, 2: False}) is False
    assert settled(rule, {0: True, 1: False, 2: True}) is None
    assert more_seeds(rule, {0: True, 1: False, 2: True}) == 1
