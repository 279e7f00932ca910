"""Long seed sets become bitmaps, so no verdicts.jsonl line grows past about 1 MB."""

from __future__ import annotations

import random

from counterfact import VerdictRecord, compare_arms
from counterfact.records import VERDICT_SCHEMA_VERSION
from counterfact.records.seedsets import SEED_LIST_MAX, pack, unpack


def test_pack_round_trips_any_subset() -> None:
    rng = random.Random(7)
    for size in (1, 7, 8, 9, 1000, 12_345):
        seeds = sorted(rng.sample(range(size), rng.randint(0, size)))
        assert unpack(pack(seeds, size), size) == seeds


def test_bit_s_is_seed_s() -> None:
    # packbits with little bit order: seed 0 is the lowest bit of the first byte.
    assert pack([0], 8) == "AQ==" and pack([7], 8) == "gA==" and pack([8], 9) == "AAE="


def test_a_large_arm_writes_bitmaps_and_readers_see_the_same_seeds() -> None:
    samples = SEED_LIST_MAX + 2
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"m": 1}}],
        lambda ctx: "no" if ctx.arm.id == "alt" and ctx.seed % 3 == 0 else "yes",
        samples=samples,
        reference="yes",
        comparator="exact",
        executor="local",
    )
    alt = result.row("alt")
    assert alt.seeds is None and alt.flipped_seeds is None and alt.similarities is None
    assert alt.similarities_omitted and alt.similarity is not None
    assert alt.flipped_seed_list() == list(range(0, samples, 3))
    assert alt.seed_list() == list(range(samples)) and alt.failed_seed_list() == []
    assert alt.missing_seeds is None and alt.missing_seeds_bits is not None
    assert alt.missing_seed_list() == []
    line = alt.model_dump_json()
    assert len(line) < 20_000  # the lists alone would be ~120 kB
    again = VerdictRecord.model_validate_json(line)
    assert again.flipped_seed_list() == alt.flipped_seed_list()


def test_a_small_arm_keeps_plain_lists() -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"m": 1}}],
        lambda ctx: "yes",
        samples=3,
        reference="yes",
        comparator="exact",
        executor="local",
    )
    alt = result.row("alt")
    assert alt.seeds == [0, 1, 2] and alt.seeds_bits is None and alt.similarities == [1.0] * 3


def test_a_line_before_version_8_loads_without_missing_seeds() -> None:
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"m": 1}}],
        lambda ctx: "yes",
        samples=3,
        reference="yes",
        comparator="exact",
        executor="local",
    )
    line = result.row("alt").model_dump(mode="json", by_alias=True)
    assert line["schema_version"] == VERDICT_SCHEMA_VERSION and line["missing_seeds"] == []
    del line["missing_seeds"], line["missing_seeds_bits"]
    old = VerdictRecord.model_validate(line | {"schema_version": 7})
    assert old.missing_seeds is None and old.missing_seed_list() == []
