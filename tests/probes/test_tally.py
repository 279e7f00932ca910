"""The streaming tally on its own: order-independence, the late reference, memory, errors."""

from __future__ import annotations

import random

import pytest

from counterfact.exceptions import ScoringError
from counterfact.probes.arms import ArmSpec
from counterfact.probes.comparators import ExactComparator
from counterfact.probes.scenarios import ScenarioSpec
from counterfact.probes.similarity import CustomSimilarity, TextSimilarity
from counterfact.probes.tally import SCORE_BATCH, ScenarioTally
from counterfact.records.runs import RunError, RunRecord

ARMS = (ArmSpec("base", {"m": "a"}), ArmSpec("alt", {"m": "b"}))


def rec(
    arm: str, seed: int, output: str | None = "yes", manifest: dict[str, object] | None = None
) -> RunRecord:
    return RunRecord(
        scenario="s",
        arm=arm,
        seed=seed,
        output=output,
        manifest=manifest,
        cost=None,
        error=None if output is not None else RunError(type="E", message="m"),
        duration_s=0.0,
        finished_at="t",
    )


def tally(reference: str | None, samples: int, similarity: object = None) -> ScenarioTally:
    sim = similarity if similarity is not None else TextSimilarity()
    return ScenarioTally(
        ScenarioSpec("s", {}, reference), ARMS, "base", samples, ExactComparator(), sim
    )  # type: ignore[arg-type]


def test_the_baseline_seed0_reference_is_used_even_when_it_arrives_last() -> None:
    t = tally(None, 3)
    for r in [
        rec("alt", 0, "no"),
        rec("alt", 1, "yes"),
        rec("base", 2, "yes"),
        rec("base", 1, "yes"),
        rec("base", 0, "yes"),
    ]:
        t.add(r)
    t.finish()
    assert (t.reference.text, t.reference.source) == ("yes", "baseline-arm")
    stats = t.stats("alt")
    assert stats is not None and stats.flipped_seeds == (0,)


def test_a_failed_baseline_seed0_leaves_nothing_to_score() -> None:
    t = tally(None, 2)
    for r in [rec("alt", 0, "no"), rec("base", 0, None), rec("base", 1, "yes")]:
        t.add(r)
    t.finish()
    assert t.reference.text is None and t.stats("alt") is None
    assert t.arms["alt"].seeds == [0] and t.arms["base"].seeds == [1]


def test_outputs_are_scored_as_soon_as_a_scenario_is_complete() -> None:
    # Few seeds, many scenarios: a scenario's outputs must not wait for a batch of 256.
    t = tally("yes", 2)
    for r in [rec("base", 0), rec("base", 1), rec("alt", 0, "no")]:
        t.add(r)
    assert len(t._queue) == 3  # the scenario is not complete yet
    t.add(rec("alt", 1, "no"))
    assert t._queue == [] and t.arms["alt"].scored.all()


def test_the_queue_never_exceeds_a_batch_once_the_reference_is_known() -> None:
    t = tally("yes", 2 * SCORE_BATCH)
    for seed in range(2 * SCORE_BATCH):
        t.add(rec("alt", seed, "no"))
        assert len(t._queue) < SCORE_BATCH


def test_the_verdict_inputs_do_not_depend_on_arrival_order() -> None:
    runs = [rec("base", s, "yes", {"m": "a"}) for s in range(6)]
    runs += [rec("alt", s, "no" if s % 2 else "yes", {"m": f"x{s % 3}"}) for s in range(6)]
    seen = set()
    for trial in range(20):
        random.Random(trial).shuffle(runs)
        t = tally(None, 6)
        for r in runs:
            t.add(r)
        t.finish()
        app = t.arms["alt"].application()
        seen.add((t.stats("alt"), tuple((m.facet, m.observed) for m in app.mismatches)))
    assert len(seen) == 1


def test_a_scoring_error_surfaces_at_finish_not_mid_stream() -> None:
    def broken(reference: str, outputs: list[str]) -> list[float]:
        raise RuntimeError("model offline")

    t = tally("yes", 2, CustomSimilarity(broken))
    for r in [rec("base", 0), rec("base", 1), rec("alt", 0), rec("alt", 1)]:
        t.add(r)  # must not raise: the store writes every record first
    with pytest.raises(ScoringError, match="model offline"):
        t.finish()


def test_duplicates_and_out_of_range_seeds_are_ignored() -> None:
    t = tally("yes", 2)
    for r in [rec("alt", 0, "no"), rec("alt", 0, "yes"), rec("alt", 5, "no"), rec("alt", -1, "no")]:
        t.add(r)
    t.finish()
    stats = t.stats("alt")
    assert stats is not None and stats.seeds == (0,) and stats.flipped_seeds == (0,)


def test_changed_to_keeps_the_lowest_seeds_whatever_the_arrival_order() -> None:
    # 30 flipped seeds, outputs "no" / "No" (one answer once normalized): the record must list
    # the lowest 20 seeds and the lowest seed's text, in any order the runs finish (a resumed
    # sweep reads them back in another order than they first arrived)
    seen = []
    for order in (list(range(30)), list(range(29, -1, -1)), random.Random(3).sample(range(30), 30)):
        t = tally("yes", 30)
        for s in order:
            t.add(rec("alt", s, "no" if s % 2 else "No"))
        t.finish()
        seen.append(t.arms["alt"].changed_to())
    assert seen[0] == seen[1] == seen[2]
    assert seen[0] == [("No", 30, list(range(20)))]
