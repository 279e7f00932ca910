"""The arm-level test's power over an eval set, simulated (``counterfact plan``, issue 26)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from counterfact.verdicts.planning.evalset import fewest_questions, plan_eval_set, question_grid
from counterfact.verdicts.planning.power_evalset import (
    EvalDesign,
    Question,
    effect_pool,
    pool_of,
    power_at,
    predicted_questions,
)

DESIGN = EvalDesign(0.05, "holm", "greater")


def sign_test_power(questions: int, up: float, down: float, alpha: float) -> float:
    """Exact power of the sign-flip test when every question moves by +-1 or 0 (copies at one
    pair each): it is the one-sided sign test over the questions that moved, so the power is
    the sum over k moved and j of them up of P(k, j) [P(Bin(k, 1/2) >= j) <= alpha] — exact
    enumeration with scipy's binomial distribution."""
    total = 0.0
    moved = up + down
    for k in range(1, questions + 1):
        p_k = binom.pmf(k, questions, moved)
        j = np.arange(k + 1)
        hit = binom.sf(j - 1, k, 0.5) <= alpha * (1 + 1e-9)
        total += p_k * float(np.sum(binom.pmf(j, k, up / moved) * hit))
    return total


def test_copies_power_matches_the_exact_sign_test_power() -> None:
    # 10 of 40 questions up, 4 down, the rest unmoved; every seed a copy
    pool = pool_of([(1.0, 0.0)] * 10 + [(0.0, 1.0)] * 4 + [(0.0, 0.0)] * 26)
    design = EvalDesign(0.05, "none", "greater")
    exact = sign_test_power(60, 10 / 40, 4 / 40, 0.05)
    ((power, se),) = power_at([pool], 60, 1, design, 4000, seed=1)
    assert power == pytest.approx(exact, abs=3.5 * se)


def test_copies_power_does_not_depend_on_the_seeds() -> None:
    pool = pool_of([(1.0, 0.0)] * 10 + [(0.0, 1.0)] * 4 + [(0.0, 0.0)] * 26)
    assert pool.degenerate
    powers = {power_at([pool], 50, n, DESIGN, 200, seed=3)[0][0] for n in (1, 2, 5, 20)}
    assert len(powers) == 1


def test_the_normal_tail_agrees_with_the_exact_test_where_it_takes_over() -> None:
    rng = np.random.default_rng(5)
    cells = [(float(a), float(b)) for a, b in rng.uniform(0, 0.4, size=(40, 2))]
    pool = pool_of(cells)
    exact = power_at([pool], 400, 3, DESIGN, 300, seed=2, exact_up_to=400)[0][0]
    normal = power_at([pool], 400, 3, DESIGN, 300, seed=2, exact_up_to=0)[0][0]
    assert abs(exact - normal) <= 0.02  # the same draws: only sweeps at the boundary differ


def test_the_prediction_is_none_without_an_effect_the_test_s_way() -> None:
    pool = pool_of([(0.1, 0.3)] * 10)
    assert predicted_questions(pool, 3, DESIGN, 0.8, 1) is None
    assert predicted_questions(pool, 3, EvalDesign(0.05, "holm", "less"), 0.8, 1) is not None


def test_the_question_grid_is_whole_counts_then_ten_steps_a_decade() -> None:
    assert question_grid(3, 200) == [
        *range(3, 11),
        *(12, 15, 20, 25, 30, 40, 50, 60, 80, 100, 120, 150, 200),
    ]
    assert question_grid()[-1] == 100_000


def test_fewest_questions_finds_the_first_grid_point_that_reaches() -> None:
    grid = list(range(10, 1000, 10))
    for start in (0, 20, 98):
        found = fewest_questions(lambda q: q / 1000, 0.5, grid, start)
        assert found is not None and grid[found] == 500
    assert fewest_questions(lambda q: 0.1, 0.5, grid, 50) is None


def test_copies_plan_the_fewest_seeds_and_say_seeds_add_nothing() -> None:
    pool = pool_of([(1.0, 0.0)] * 10 + [(0.0, 0.0)] * 30)
    planned = plan_eval_set([pool], 0, DESIGN, 0.8)
    assert planned.seeds == 2 and planned.seeds_add_nothing
    assert [g.seeds for g in planned.grid] == [2]


def test_no_effect_is_out_of_reach_at_once() -> None:
    planned = plan_eval_set([pool_of([(0.1, 0.1)] * 20)], 0, DESIGN, 0.8)
    assert planned.questions is None and planned.grid == []


def test_a_declared_effect_moves_the_mean_difference_to_it_whole_or_per_seed() -> None:
    # A copies question the baseline alone failed (old model: p10 = min(0 + d, 1 - 1) = 0, a
    # difference of -1 kept), one both held, one both failed, and one whose seeds varied.
    questions = [
        Question(0.0, 1.0, 0.0),
        Question(0.0, 0.0, 0.0),
        Question(0.0, 0.0, 1.0),
        Question(0.25, 0.25, 0.25),
    ]
    for alternative in ("greater", "less"):
        pool = effect_pool(questions, 0.2, alternative)
        sign = -1 if alternative == "less" else 1
        mean = float(np.sum(pool.probabilities * (pool.p10 - pool.p01)))
        assert mean == pytest.approx(sign * 0.2)
        assert pool.probabilities.sum() == pytest.approx(1.0) and not pool.capped
    copies = effect_pool(questions[:3], 0.2, "greater")
    assert copies.degenerate  # whole questions move: a copies pilot stays copies
    assert effect_pool(questions[:3], 0.9, "greater").capped


def test_the_recommended_power_is_re_estimated_from_fresh_sweeps() -> None:
    # issue 43 item 4: the search keeps the first grid point whose noisy estimate clears the
    # target, so that estimate leans high (the audit re-ran points printed 0.82 +- 0.022 and
    # got 0.780 +- 0.010). The figure given must come from draws the search never saw: here it
    # is checked against the exact sign-test power (scipy enumeration, sign_test_power) at the
    # recommended point, within 3 of the re-estimate's standard errors, and against a rerun of
    # the re-estimate's own stream.
    pool = pool_of([(1.0, 0.0)] * 7 + [(0.0, 1.0)] * 3 + [(0.0, 0.0)] * 30)
    design = EvalDesign(0.05, "none", "greater")
    planned = plan_eval_set([pool], 0, design, 0.8, sweeps=60, seed=3, check=(2000, 77))
    assert planned.questions is not None and planned.seeds == 2
    assert planned.power is not None and planned.se is not None
    ((_, search_se),) = power_at([pool], planned.questions, 2, design, 60, seed=3)
    assert (planned.power, planned.se) == power_at([pool], planned.questions, 2, design, 2000, 77)[
        0
    ]
    assert planned.se < search_se / 5
    exact = sign_test_power(planned.questions, 7 / 40, 3 / 40, 0.05)
    assert abs(planned.power - exact) <= 3 * planned.se
