"""``bisect.json`` files written before ``bisect.stop_early`` (schema 8) still load."""

from __future__ import annotations

import json
from pathlib import Path

from counterfact import RunContext, find_culprits
from counterfact.records import BISECT_SCHEMA_VERSION, read_bisect


def _agent(ctx: RunContext) -> str:
    return "right" if "c" in ctx.arm.ablations else "wrong"


def test_a_schema_8_file_loads_as_a_search_that_ran_every_seed(tmp_path: Path) -> None:
    """A file as schema 8 wrote it: today's record without the fields 9 added."""
    find_culprits(["a", "c"], _agent, samples=3, reference="wrong", out=tmp_path, fresh=True)
    path = tmp_path / "bisect.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data.pop("stop_early") is False
    for probe in data["probes"]:
        assert probe.pop("decided_early") is False
    flat = data | data.pop("execution")  # version 8 kept the counts at the top level
    for key in ("runs_from_cache", "runs_failed", "cache_entries_rejected", "torn_line_dropped"):
        del flat[key]  # counts a search did not record before version 10
    for key in ("concurrency", "budget", "timings"):
        del flat[key]
    path.write_text(json.dumps(flat | {"schema_version": 8}), encoding="utf-8")
    record = read_bisect(tmp_path)
    assert record.schema_version == 8 < BISECT_SCHEMA_VERSION == 10
    assert record.execution.runs_used == 12 and record.execution.status == "complete"
    assert record.culprits == [["c"]] and record.stop_early is False
    assert [p.decided_early for p in record.probes] == [False] * len(record.probes)
