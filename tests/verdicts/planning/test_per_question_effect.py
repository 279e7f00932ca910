"""``--effect`` on the per-question plans (paired, pooled, sequential, unpaired) is added per
question, the way the data's structure adds it (issue 43): a question whose seeds repeat moves
whole, one whose seeds varied moves seed by seed.

The references are worked by hand from the model and the tests' own null distributions: on a
copies question every one of its ``n`` pairs is the same, so a moved question is ``n``
discordant pairs the arm's way and an unmoved one none, and each test's verdict on those counts
is a closed form (stated at each test).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy.stats import binom

from counterfact.verdicts.planning.design import Design, cells_of
from counterfact.verdicts.planning.paired import plan_challenger
from counterfact.verdicts.planning.power import Cells, Mixed, mixed_power, paired_power
from counterfact.verdicts.planning.power_evalset import Question, question_states
from counterfact.verdicts.planning.power_sequential import sequential_power
from counterfact.verdicts.stats.settings import Waves
from tests.verdicts.planning.pilot_rows import rows_of


def design(effect: float, scenarios: int, **kw: object) -> Design:
    return dataclasses.replace(
        Design(0.05, "holm", "greater", scenarios, 1, "seed", None, effect), **kw
    )


NEITHER = (0, 0, 0)  # a copies question (5 pairs) on which neither side flipped


@pytest.mark.parametrize(
    "q",
    [
        Question(0.0, 0.0, 0.0),
        Question(0.0, 1.0, 0.0),
        Question(1.0, 0.0, 0.0),
        Question(0.0, 0.6, 0.2),  # old model: p10 = min(0.6 + d, 0.4), a difference of -0.2 kept
        Question(0.3, 0.1, 0.1),
    ],
)
@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_each_question_s_own_difference_is_the_effect(q: Question, alternative: str) -> None:
    states, capped = question_states(q, 0.2, alternative)  # type: ignore[arg-type]
    weights = np.asarray([s[3] for s in states])
    diff = sum(w * (a - b) for a, b, _, w in states)
    assert weights.sum() == pytest.approx(1.0)
    if alternative == "less" and q == Question(0.0, 0.0, 0.0):
        # the arm never flipped: it has no flips to lose, the effect is capped at none
        assert capped and diff == pytest.approx(0.0)
        return
    assert not capped and diff == pytest.approx(0.2 if alternative == "greater" else -0.2)
    for a, b, c, _ in states:
        assert min(a, b, c) >= -1e-12 and a + b + c <= 1 + 1e-12
        if q.repeats:  # a copies question stays a copy: every state is one outcome a side
            assert {round(a, 12), round(b, 12), round(c, 12)} <= {0.0, 1.0}


def test_a_copies_question_s_own_test_levels_off_at_the_chance_it_moved() -> None:
    # A copies question neither side flipped, --effect 0.3: it moves whole with probability
    # 0.3, then all n pairs are arm-only and the exact McNemar p is 0.5^n (<= 0.05 from n = 5);
    # unmoved, no pair is discordant. So the power is 0.3 at every n >= 5 and 0 below, and 0.8
    # is out of reach. The old per-seed model (p10 = 0.3 a seed) planned 21 samples at 0.80.
    (row,) = rows_of([NEITHER], 5)
    cells = cells_of(row, design(0.3, 1))
    assert isinstance(cells, Mixed)
    for n in (2, 4, 5, 8, 40):
        assert mixed_power(n, cells, 0.05, "greater") == pytest.approx(0.3 * (n >= 5))
    plan = plan_challenger(rows_of([NEITHER], 5), design(0.3, 1), 0.8)
    assert plan.samples is None and plan.scenarios[0].samples is None
    assert plan.note is not None and "more seeds add nothing" in plan.note
    reachable = plan_challenger(rows_of([NEITHER], 5), design(0.3, 1), 0.25)
    assert reachable.samples == 5 and reachable.power == pytest.approx(0.3)


def test_the_pooled_test_over_copies_questions_counts_the_questions_that_moved() -> None:
    # 4 copies questions neither side flipped, --effect 0.5: M ~ Bin(4, 0.5) of them move, the
    # pooled McNemar sees n * M arm-only pairs and none the other way, p = 0.5^(n M). At n = 5
    # it rejects whenever M >= 1: power 1 - 0.5^4 = 0.9375; at n = 4 only when M >= 2:
    # 11/16 = 0.6875 (scipy: binom.sf(1, 4, 0.5)). So the plan is 5 samples. The old model
    # (p10 = 0.5 a seed, independent) planned 3 at 0.81.
    assert binom.sf(1, 4, 0.5) == pytest.approx(0.6875)
    plan = plan_challenger(rows_of([NEITHER] * 4, 5), design(0.5, 4), 0.8)
    assert plan.samples == 5 and plan.power is not None and plan.se is not None
    assert plan.power == pytest.approx(0.9375, abs=4 * plan.se)


def test_a_sequential_copies_question_stops_significant_only_if_it_moved() -> None:
    # The same copies question under a sequential sweep (waves of 8 to 200, threshold 20),
    # --effect 0.5: a moved arm has every pair arm-only and its e-process reaches 20 well within
    # 200 seeds (the plain cells (1, 0) show it: power 1); an unmoved one never moves. The power
    # is the share of the 2,000 simulated arms drawn moved: 0.5, standard error 0.011.
    rule = Waves(samples=8, wave=8, max_samples=200, alpha=0.05, threshold=20.0)
    assert sequential_power(200, Cells(1.0, 0.0), rule, 0, seed=1).power == 1.0
    (row,) = rows_of([NEITHER], 5)
    cells = cells_of(row, design(0.5, 1))
    assert isinstance(cells, Mixed)
    found = sequential_power(200, cells, rule, 0, seed=1)
    assert found.power == pytest.approx(0.5, abs=4 * 0.0112)
    plan = plan_challenger([row], design(0.5, 1, waves=rule), 0.8)
    assert plan.samples is None  # the old per-seed model planned 24 at 0.99


def test_the_unpaired_test_on_a_copies_question_levels_off_at_the_chance_it_moved() -> None:
    # pairing: none, the same copies question, --effect 0.3: moved, the arm flips on all n runs
    # and the baseline on none; Fisher's one-sided p is 1 / C(2n, n), at most 0.05 from n = 3
    # (1/20); unmoved, no flips. Power 0.3 from n = 3, so 0.8 is out of reach (the old model,
    # the arm's rate 0.3 a run, planned 21 at 0.80) and 0.25 is reached at 3.
    none = design(0.3, 1, pairing="none")
    assert plan_challenger(rows_of([NEITHER], 5), none, 0.8).samples is None
    plan = plan_challenger(rows_of([NEITHER], 5), none, 0.25)
    assert plan.samples == 3 and plan.power == pytest.approx(0.3)


def test_a_question_whose_seeds_varied_moves_seed_by_seed() -> None:
    # 5 pairs: 3 baseline-only, 1 both (p10 0, p01 0.6, p11 0.2). The old model kept p01 = 0.6
    # and capped p10 at 0.4: a difference of -0.2 under --effect 0.2, out of reach. Per
    # question: both sides at the mean discordance 0.3, then the arm's held seeds (0.5 of them)
    # flip with pi = 0.4: p10 = 0.3 + 0.4 * 0.2 = 0.38, p01 = 0.6 * 0.3 = 0.18, one state, its
    # power the exact paired power there.
    (row,) = rows_of([(0, 3, 1)], 5)
    cells = cells_of(row, design(0.2, 1))
    assert isinstance(cells, Mixed) and len(cells.states) == 1
    (state,) = cells.states
    assert (state.p10, state.p01) == pytest.approx((0.38, 0.18))
    plan = plan_challenger([row], design(0.2, 1), 0.8)
    assert plan.samples is not None and plan.power is not None
    assert plan.power == pytest.approx(paired_power(plan.samples, 0.38, 0.18, 0.05, "greater"))
