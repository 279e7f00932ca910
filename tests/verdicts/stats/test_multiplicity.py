"""Multiplicity adjustments against hand-computed values (rule 15)."""

from __future__ import annotations

import pytest

from counterfact.verdicts.stats.multiplicity import adjust, holm

P = [0.01, 0.04, 0.03, 0.005]


def test_holm_by_hand() -> None:
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04; running max
    # 0.02, 0.03, 0.06, 0.06; back in input order:
    assert holm(P) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_bh_by_hand() -> None:
    # p * m / rank = 0.02, 0.02, 0.04, 0.04 (ranks 1..4); running min from the top, input order:
    assert adjust(P, "bh") == pytest.approx([0.02, 0.04, 0.04, 0.02])


def test_by_is_bh_times_the_harmonic_sum() -> None:
    c = 1 + 1 / 2 + 1 / 3 + 1 / 4
    assert adjust(P, "by") == pytest.approx([min(1.0, x * c) for x in [0.02, 0.04, 0.04, 0.02]])


def test_none_and_an_empty_family() -> None:
    assert adjust(P, "none") == P
    assert adjust([], "holm") == []
