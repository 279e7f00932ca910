"""Claims summarise long seed lists; records keep every seed."""

from __future__ import annotations

from counterfact import compare_arms
from counterfact.verdicts.wording.shared import seed_list


def test_short_lists_are_written_out() -> None:
    assert seed_list([0, 2, 5]) == "[0, 2, 5]"
    assert seed_list(list(range(10))) == str(list(range(10)))


def test_long_lists_show_the_first_ten_and_count_the_rest() -> None:
    assert (
        seed_list(list(range(1, 10_000, 2)))
        == "1, 3, 5, 7, 9, 11, 13, 15, 17, 19, … and 4,990 more"
    )


def test_a_large_arms_claim_stays_short_while_its_record_keeps_every_seed() -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"m": 1}}],
        lambda ctx: "yes" if ctx.arm.id == "base" else "no",
        samples=3_000,
        reference="yes",
        comparator="exact",
        executor="local",
    )
    row = result.row("alt")
    assert row.verdict == "confirmed" and row.flipped_seeds == list(range(3_000))
    assert "0, 1, 2, 3, 4, 5, 6, 7, 8, 9, … and 2,990 more" in row.claim
    assert len(row.claim) < 600
