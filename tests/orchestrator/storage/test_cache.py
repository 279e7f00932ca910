"""The run cache on its own: keys, hits under new ids, misses, damaged entries."""

from __future__ import annotations

from pathlib import Path

from counterfact.orchestrator.storage.cache import RunCache
from counterfact.probes.arms import ArmSpec
from counterfact.probes.runner import RunContext, ScenarioView
from counterfact.records.runs import RunError, RunRecord


def ctx(arm: ArmSpec, seed: int = 0, scenario: str = "s", q: str = "x") -> RunContext:
    return RunContext(ScenarioView(scenario, {"q": q}), arm.view(), seed)


def done(c: RunContext, *, failed: bool = False) -> RunRecord:
    return RunRecord(
        scenario=c.scenario.id,
        arm=c.arm.id,
        seed=c.seed,
        output=None if failed else "answer",
        manifest=None,
        cost=None,
        error=RunError(type="E", message="m") if failed else None,
        duration_s=0.1,
        finished_at="t",
    )


def test_a_hit_comes_back_under_the_new_sweeps_ids(tmp_path: Path) -> None:
    cache = RunCache(tmp_path, "r@version:1")
    arm = ArmSpec("alt", {"m": "big"})
    cache.put(ctx(arm), arm, done(ctx(arm)))
    renamed = ArmSpec("other-name", {"m": "big"})
    hit = cache.get(ctx(renamed, scenario="s2"), renamed)
    assert hit is not None
    assert (hit.arm, hit.scenario, hit.from_cache, hit.output) == (
        "other-name",
        "s2",
        True,
        "answer",
    )


def test_anything_that_changes_the_run_misses(tmp_path: Path) -> None:
    cache = RunCache(tmp_path, "r@version:1")
    arm = ArmSpec("alt", {"m": "big"})
    cache.put(ctx(arm), arm, done(ctx(arm)))
    other = ArmSpec("alt", {"m": "small"})
    assert cache.get(ctx(arm, seed=1), arm) is None
    assert cache.get(ctx(arm, q="y"), arm) is None
    assert cache.get(ctx(other), other) is None
    assert RunCache(tmp_path, "r@version:2").get(ctx(arm), arm) is None


def test_failed_runs_are_not_cached_and_damaged_entries_miss(tmp_path: Path) -> None:
    cache = RunCache(tmp_path, "r")
    arm = ArmSpec("a", {"m": 1})
    cache.put(ctx(arm), arm, done(ctx(arm), failed=True))
    assert cache.get(ctx(arm), arm) is None
    cache.put(ctx(arm), arm, done(ctx(arm)))
    key = cache.key(ctx(arm), arm)
    (tmp_path / key[:2] / f"{key}.json").write_text("{torn")
    assert cache.get(ctx(arm), arm) is None


def test_a_run_too_large_to_read_back_is_not_cached(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from counterfact.orchestrator.storage import cache as cachemod

    monkeypatch.setattr(cachemod, "MAX_ENTRY_BYTES", 100)
    cache = RunCache(tmp_path, "r@version:1")
    arm = ArmSpec("alt", {"m": "big"})
    cache.put(ctx(arm), arm, done(ctx(arm)))
    assert not list(tmp_path.rglob("*.json"))
    assert cache.get(ctx(arm), arm) is None and cache.rejected == 0
