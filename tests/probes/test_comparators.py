from __future__ import annotations

import numpy as np
import pytest

from counterfact import ScoringError
from counterfact.probes.comparators import (
    COMPARATORS,
    CustomComparator,
    ExactComparator,
    NormalizedComparator,
    NumericComparator,
    SimilarityComparator,
    check_spec,
    first_number,
    normalize_text,
)


def test_exact_flips_on_any_difference() -> None:
    assert not ExactComparator().flipped("Paris", "Paris", 1.0)
    assert ExactComparator().flipped("Paris", "paris", 1.0)


def test_normalized_ignores_case_punctuation_and_spacing() -> None:
    assert normalize_text("  The  ANSWER: Paris! ") == "the answer paris"
    assert not NormalizedComparator().flipped("The answer: Paris.", "the answer  paris", 0.0)
    assert NormalizedComparator().flipped("Paris", "Lyon", 1.0)


@pytest.mark.parametrize(
    ("text", "number"),
    [("about 1,234.5 units", 1234.5), ("-3e2", -300.0), ("none", None), ("v .5", 0.5)],
)
def test_first_number(text: str, number: float | None) -> None:
    assert first_number(text) == number


def test_numeric_tolerance_is_inclusive() -> None:
    cmp = NumericComparator(tolerance=0.5)
    assert not cmp.flipped("42", "answer: 42.5", 0.0)
    assert cmp.flipped("42", "answer: 42.51", 1.0)
    assert cmp.flipped("42", "no number here", 1.0)


def test_numeric_reference_without_number_is_a_scoring_error() -> None:
    with pytest.raises(ScoringError, match="reference holds no number"):
        NumericComparator().flipped("forty-two", "42", 1.0)


def test_similarity_threshold_is_strict() -> None:
    cmp = SimilarityComparator(threshold=0.8)
    assert not cmp.flipped("a", "b", 0.8)
    assert cmp.flipped("a", "b", 0.7999)


def test_custom_true_means_flipped_and_accepts_numpy_bool() -> None:
    assert CustomComparator(lambda r, o: r != o).flipped("a", "b", 1.0)
    assert not CustomComparator(lambda r, o: np.bool_(False)).flipped("a", "b", 1.0)


def test_custom_must_return_bool() -> None:
    with pytest.raises(ScoringError, match="must return a bool"):
        CustomComparator(lambda r, o: 1).flipped("a", "b", 1.0)  # type: ignore[arg-type,return-value]


def test_custom_exception_becomes_scoring_error() -> None:
    def boom(r: str, o: str) -> bool:
        raise ValueError("nope")

    with pytest.raises(ScoringError, match="raised ValueError: nope"):
        CustomComparator(boom).flipped("a", "b", 1.0)


def test_contains_judges_the_answer_not_the_wording() -> None:
    # The issue's own case: a prompt change rewords the answer but keeps it.
    contains = COMPARATORS["contains"].build({})
    assert not contains.flipped("Canberra", "The capital is Canberra.", 0.1)
    assert not contains.flipped("canberra!", "Answer: CANBERRA", 0.1)  # normalized both sides
    assert contains.flipped("Canberra", "It is Sydney.", 0.9)
    assert contains.answer_level


def test_regex_extracts_group_one_and_compares_normalized() -> None:
    regex = COMPARATORS["regex"].build({"pattern": r"[Aa]nswer:\s*(\w+)"})
    assert not regex.flipped("Answer: Canberra.", "answer: canberra", 1.0)
    assert regex.flipped("Answer: Canberra.", "Answer: Sydney", 1.0)
    assert regex.flipped("Answer: Canberra.", "Canberra, obviously", 1.0)  # no match: flipped


def test_regex_without_group_uses_the_whole_match() -> None:
    regex = COMPARATORS["regex"].build({"pattern": r"\d+ km"})
    assert not regex.flipped("It is 300 km away", "about 300 km.", 1.0)
    assert regex.flipped("It is 300 km away", "about 310 km", 1.0)


def test_regex_on_a_reference_without_a_match_is_a_scoring_error() -> None:
    regex = COMPARATORS["regex"].build({"pattern": r"Answer: (\w+)"})
    with pytest.raises(ScoringError, match="extracts nothing"):
        regex.flipped("Canberra", "Answer: Canberra", 1.0)


def test_text_level_comparators_are_not_answer_level() -> None:
    assert not any(COMPARATORS[k].build({}).answer_level for k in ("exact", "normalized"))
    assert not COMPARATORS["similarity"].build({}).answer_level


def test_contains_matches_whole_words_and_refuses_an_empty_reference() -> None:
    contains = COMPARATORS["contains"].build({})
    assert contains.flipped("no", "I do not know", 1.0)  # 'no' is not a word of the output
    assert not contains.flipped("no", "No, it is not.", 1.0)
    with pytest.raises(ScoringError, match="empty once normalized"):
        contains.flipped(".", "anything", 1.0)


def test_regex_takes_the_group_that_matched_and_ignores_empty_answers() -> None:
    regex = COMPARATORS["regex"].build({"pattern": r"(yes)|(no)"})
    assert not regex.flipped("no", "no way", 1.0)  # group 2 took part: 'no' == 'no'
    assert regex.flipped("no", "yes", 1.0)
    empty = COMPARATORS["regex"].build({"pattern": r"Answer:\s*(\w*)"})
    assert empty.flipped("Answer: Canberra", "Answer:", 1.0)  # an empty capture is no answer
    with pytest.raises(ScoringError, match="extracts nothing"):
        empty.flipped("Answer: ", "Answer: x", 1.0)


def test_one_of_reads_the_one_option_a_text_names() -> None:
    choice = COMPARATORS["one-of"].build({"options": ["Paris", "London", "New York", "York"]})
    assert choice.answer_level and choice.kind == "one-of"
    assert not choice.flipped("Paris", "I pick paris.", 0.0)  # normalized, as contains is
    assert choice.flipped("Paris", "London, surely", 1.0)
    assert choice.flipped("Paris", "Paris? No: London.", 1.0)  # two options named: no answer
    assert choice.flipped("Paris", "I cannot say", 1.0)  # none named: no answer
    assert not choice.flipped("New York", "It is New York.", 0.0)  # the longest option wins
    assert choice.flipped("York", "It is New York.", 1.0)
    assert choice.flipped("Paris", "Parisian", 1.0)  # whole words only


def test_one_of_refuses_a_reference_that_names_no_single_option() -> None:
    choice = COMPARATORS["one-of"].build({"options": ["yes", "no"]})
    with pytest.raises(ScoringError, match=r"names none of the options \['yes', 'no'\]"):
        choice.flipped("maybe", "yes", 1.0)
    with pytest.raises(ScoringError, match=r"names 2 \(yes, no\)"):
        choice.flipped("yes or no", "yes", 1.0)


@pytest.mark.parametrize(
    ("kind", "options", "spec"),
    [
        ("exact", {}, "exact"),
        ("contains", {}, "contains"),
        ("numeric", {"tolerance": 0.01}, "numeric(tolerance=0.01)"),
        ("similarity", {}, "similarity(threshold=0.8)"),
        ("regex", {"pattern": r"Answer: (\d+)"}, r"regex(pattern=/Answer: (\d+)/)"),
        ("one-of", {"options": ["A", "B"]}, 'one-of(options=["A", "B"])'),
    ],
)
def test_check_spec_names_the_kind_and_its_settings(
    kind: str, options: dict[str, object], spec: str
) -> None:
    assert check_spec(COMPARATORS[kind].build(options)) == spec


def _differs(reference: str, output: str) -> bool:
    return reference != output


def test_a_custom_check_is_named_by_its_callable() -> None:
    assert check_spec(CustomComparator(_differs)) == f"custom(target={__name__}:_differs)"


def test_the_report_s_answer_level_kinds_are_the_comparators_that_say_so() -> None:
    from counterfact.orchestrator.drivers.outputs.report import ANSWER_LEVEL

    samples = {"regex": {"pattern": "x"}, "one-of": {"options": ["a", "b"]}}
    samples["custom"] = {"target": lambda r, o: r != o}
    samples["judge"] = {"model": "m", "judge": object()}  # built, not asked
    built = {k: COMPARATORS[k].build(samples.get(k, {})) for k in COMPARATORS}
    assert {k for k, c in built.items() if c.answer_level} == ANSWER_LEVEL
