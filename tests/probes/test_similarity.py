from __future__ import annotations

import pytest

from counterfact import ScoringError
from counterfact.probes.similarity import CustomSimilarity, TextSimilarity


def test_text_similarity_is_normalized_indel() -> None:
    # Reference values by hand: Indel distance counts insertions + deletions.
    # "abc" -> "abd": delete c, insert d = 2; 1 - 2 / (3 + 3) = 0.6667.
    # "kitten" -> "sitting": LCS "ittn" (4), distance 6 + 7 - 2*4 = 5; 1 - 5/13 = 0.6154.
    got = TextSimilarity().score("abc", ["abc", "abd", "", "xyz"])
    assert got == pytest.approx([1.0, 4 / 6, 0.0, 0.0])
    assert TextSimilarity().score("kitten", ["sitting"]) == pytest.approx([8 / 13])


def test_text_similarity_of_two_empty_strings_is_one() -> None:
    assert TextSimilarity().score("", [""]) == [1.0]


def test_custom_similarity_checked() -> None:
    assert CustomSimilarity(lambda r, outs: [0.5] * len(outs)).score("r", ["a", "b"]) == [0.5, 0.5]
    with pytest.raises(ScoringError, match="returned 1 values for 2 outputs"):
        CustomSimilarity(lambda r, outs: [0.5]).score("r", ["a", "b"])
    with pytest.raises(ScoringError, match=r"values must lie in \[0, 1\]"):
        CustomSimilarity(lambda r, outs: [1.5]).score("r", ["a"])
    with pytest.raises(ScoringError, match="is str, not a float"):
        CustomSimilarity(lambda r, outs: ["x"]).score("r", ["a"])  # type: ignore[list-item]
