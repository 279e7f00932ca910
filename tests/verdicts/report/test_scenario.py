"""The per-question sections of the report: the seeds a row used, failed, and never ran."""

from __future__ import annotations

from counterfact.probes.arms import ArmSpec
from counterfact.probes.comparators import ExactComparator
from counterfact.probes.similarity import TextSimilarity
from counterfact.records.runs import RunRecord
from counterfact.verdicts.assess import assess_scenario
from counterfact.verdicts.report.scenario import _seed_span

from ...helpers import run_record


def _run(arm: str, seed: int, *, failed: bool = False) -> RunRecord:
    error = ("ValueError", "broken") if failed else None
    return run_record(seed, arm, output="yes", error=error)


def test_seed_span_names_failed_seeds_and_seeds_never_run_apart() -> None:
    arms = (ArmSpec("base", {}), ArmSpec("alt", {"x": 1}))
    runs = [_run("base", s) for s in range(4)] + [_run("alt", 0), _run("alt", 1, failed=True)]
    _, alt = assess_scenario(
        "s", "yes", arms, "base", runs, 4, ExactComparator(), TextSimilarity()
    ).verdicts
    assert _seed_span(alt) == "seeds 0..0 (1); failed: 1; not run: 2, 3"


def test_a_record_before_version_8_keeps_failed_or_missing() -> None:
    arms = (ArmSpec("base", {}), ArmSpec("alt", {"x": 1}))
    runs = [_run("base", s) for s in range(2)] + [_run("alt", 0)]
    _, alt = assess_scenario(
        "s", "yes", arms, "base", runs, 2, ExactComparator(), TextSimilarity()
    ).verdicts
    old = alt.model_validate(
        alt.model_dump(by_alias=True)
        | {"schema_version": 7, "failed_seeds": [1], "missing_seeds": None}
    )
    assert _seed_span(old) == "seeds 0..0 (1); failed or missing: 1"
