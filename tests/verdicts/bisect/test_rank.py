"""The orders a culprit search may take its suspects in (:mod:`counterfact.verdicts.bisect.rank`)."""

from __future__ import annotations

import numpy as np

from counterfact.verdicts.bisect.rank import by_rate, lexical, random_ablations, surrogate


def test_lexical_puts_parts_sharing_the_answers_words_first() -> None:
    texts = {"a": "The river is long.", "b": "It moved to Sydney.", "c": "Sydney, the capital."}
    assert lexical(texts, ["a", "b", "c"], "The capital is Sydney") == ["c", "b", "a"]


def test_by_rate_keeps_ties_in_order() -> None:
    assert by_rate(["a", "b", "c", "d"], [0.0, 1.0, 0.5, 1.0]) == ["b", "d", "c", "a"]


def test_random_ablations_are_distinct_and_never_empty() -> None:
    masks = random_ablations(6, 32, np.random.default_rng(0))
    assert masks.shape == (32, 6) and masks.any(axis=1).all()
    assert len({row.tobytes() for row in masks}) == 32
    assert len(random_ablations(2, 32, np.random.default_rng(0))) == 3  # only 3 exist


def test_the_surrogate_fit_finds_an_additive_cause_among_noise() -> None:
    """Flip rate 0.9 when part 'p5' is removed, 0.1 otherwise (the model's own noise), drawn
    over 64 masks: the fit ranks p5 first (the weights are nnls's; the data is simulated)."""
    rng = np.random.default_rng(7)
    order = [f"p{i}" for i in range(12)]
    masks = random_ablations(12, 64, rng)
    rates = np.where(masks[:, 5], 0.9, 0.1) + rng.normal(0, 0.05, len(masks))
    assert surrogate(order, masks, rates.tolist())[0] == "p5"
