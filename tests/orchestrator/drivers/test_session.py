"""The session lifecycle both drivers share: final records written inside the run directory's
lock, the endings, and the settings the resolved sweep carries (issue 17 items 3 and 4).
"""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import Any

import pytest

from counterfact import RunContext, compare_arms, find_culprits
from counterfact.exceptions import ConfigError, RunsFailed
from counterfact.orchestrator.config.loading import load_sweep
from counterfact.orchestrator.engine.executors.registry import (
    EXECUTORS,
    OPTIONS,
    refusal,
    unhonoured,
)
from counterfact.orchestrator.storage.rundir import RunStore
from counterfact.records.paths import LOCK_FILE

ARMS: list[dict[str, Any]] = [{"id": "base"}, {"id": "alt", "facets": {"answer": "no"}}]


def answer(ctx: RunContext) -> str:
    return str(ctx.arm.facets.get("answer", "yes"))


def broken(ctx: RunContext) -> str:
    raise KeyError("no such key")


def removed(ctx: RunContext) -> str:
    return "wrong" if "fact:b" in ctx.arm.ablations else "right"


def _locked_by_someone(run_dir: Path) -> bool:
    """True when another open file description holds the directory's lock (flock locks belong
    to the open file, so a second open in this process conflicts just as another process would).
    """
    with (run_dir / LOCK_FILE).open("a") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
        return False


@pytest.fixture
def writes_seen(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """Every final record write, with whether the lock was held at that moment."""
    seen: list[tuple[str, bool]] = []
    original = RunStore.write_record

    def spy(self: RunStore, name: str, data: Any) -> None:
        assert self.run_dir is not None
        seen.append((name, _locked_by_someone(self.run_dir)))
        original(self, name, data)

    monkeypatch.setattr(RunStore, "write_record", spy)
    return seen


def test_a_sweep_writes_its_summary_inside_the_lock(
    tmp_path: Path, writes_seen: list[tuple[str, bool]]
) -> None:
    compare_arms(
        ARMS,
        answer,
        reference="yes",
        samples=2,
        executor="local",
        comparator="exact",
        out=tmp_path / "o",
    )
    assert writes_seen == [("summary.json", True)]
    assert not _locked_by_someone(tmp_path / "o")  # released once the sweep returned


def test_a_failed_sweep_writes_its_summary_inside_the_lock_then_raises(
    tmp_path: Path, writes_seen: list[tuple[str, bool]]
) -> None:
    with pytest.raises(RunsFailed, match="stopped after 2 runs: the first run of every arm"):
        compare_arms(
            ARMS,
            broken,
            reference="yes",
            samples=2,
            executor="local",
            comparator="exact",
            out=tmp_path / "o",
        )
    assert writes_seen == [("summary.json", True)]
    assert '"status": "failed"' in (tmp_path / "o" / "summary.json").read_text()
    assert not _locked_by_someone(tmp_path / "o")


def test_a_bisection_writes_bisect_json_inside_the_lock(
    tmp_path: Path, writes_seen: list[tuple[str, bool]]
) -> None:
    result = find_culprits(
        ["fact:a", "fact:b"],
        removed,
        reference="right",
        samples=2,
        executor="local",
        out=tmp_path / "b",
    )
    assert result.culprits == [["fact:b"]]
    assert writes_seen == [("bisect.json", True)]


def test_the_resolved_sweep_carries_its_settings(tmp_path: Path) -> None:
    sweep = load_sweep(
        {
            "name": "s",
            "runner": answer,
            "arms": ARMS,
            "samples": 4,
            "statistics": {"alpha": 0.1, "adjust": "bh"},
            "sequential": {"max_samples": 12, "wave": 2},
            "executor": {"kind": "local", "concurrency": 8, "timeout_s": 3},
        },
        base_dir=tmp_path,
    )
    assert sweep.samples == 4
    assert (sweep.statistics.alpha, sweep.statistics.adjust) == (0.1, "bh")
    assert sweep.waves is not None
    # one challenger on one scenario: the threshold is 1/alpha under any adjustment
    assert (sweep.waves.wave, sweep.waves.max_samples, sweep.waves.threshold) == (2, 12, 10.0)
    assert sweep.executor_options.timeout_s == 3.0
    assert sweep.executor_options.pool.concurrency == 8
    assert sweep.run_dir_for(None, "-bisect") == Path("runs") / "s-bisect"


def test_executor_rules_derive_from_the_table() -> None:
    assert set(EXECUTORS["ray"].takes) == set(OPTIONS)  # ray honours every option
    local = EXECUTORS["local"]
    assert unhonoured("local", {"address": "auto", "retries": 1}) == ["address"]
    assert unhonoured("local", {"timeout_s": 2}) == ["timeout_s"]
    assert unhonoured("local", {"timeout_s": 2, "concurrency": 4}) == []
    assert local.honours("rate_limit", {})
    assert "kind 'ray'" in refusal("address", "local")


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"kind": "local", "address": "auto"}, "'address' applies only to kind 'ray'"),
        ({"kind": "local", "timeout_s": 2}, "'timeout_s' needs kind 'ray' or 'concurrency'"),
        ({"kind": "ray", "address": "auto", "num_cpus": 2}, "'num_cpus' sizes the local Ray"),
    ],
)
def test_the_schema_refuses_what_the_table_does_not_honour(
    tmp_path: Path, section: dict[str, object], message: str
) -> None:
    raw = {"name": "s", "runner": answer, "arms": ARMS, "executor": section}
    with pytest.raises(ConfigError, match=message):
        load_sweep(raw, base_dir=tmp_path)
