"""records/paths.py: the one place a run directory's file names are written."""

from __future__ import annotations

from pathlib import Path

import pytest

from counterfact.records import paths
from counterfact.records.paths import PREVIOUS, RECORD_FILES, VIEWED, RunPaths, locate


def test_each_role_names_its_file(tmp_path: Path) -> None:
    rd = RunPaths(tmp_path)
    found = {
        role: getattr(rd, role).relative_to(tmp_path).as_posix()
        for role in ("runs", "verdicts", "arms", "summary", "bisect", "fingerprint")
    } | {role: getattr(rd, role).name for role in ("report", "live", "lock")}
    assert found == {
        "runs": "runs.jsonl",
        "verdicts": "verdicts.jsonl",
        "arms": "arms.jsonl",
        "summary": "summary.json",
        "bisect": "bisect.json",
        "fingerprint": "sweep.json",
        "report": "report.html",
        "live": "live.json",
        "lock": ".lock",
    }


def test_record_files_keep_the_order_error_messages_list() -> None:
    # docs/errors.md quotes this order ("none of runs.jsonl, sweep.json, ...").
    assert RECORD_FILES == (
        "runs.jsonl",
        "sweep.json",
        "summary.json",
        "bisect.json",
        "verdicts.jsonl",
        "arms.jsonl",
    )
    assert RunPaths(Path("d")).records() == tuple(Path("d") / n for n in RECORD_FILES)


def test_the_viewer_counts_live_json_and_not_sweep_json() -> None:
    assert set(RECORD_FILES) ^ VIEWED == {"sweep.json", "live.json"}


def test_previous_and_export_names(tmp_path: Path) -> None:
    rd = RunPaths(tmp_path)
    assert rd.previous("verdicts.jsonl") == tmp_path / "verdicts.previous.jsonl"
    assert rd.previous("report.html") == tmp_path / "report.previous.html"
    assert set(PREVIOUS) == {"verdicts.jsonl", "arms.jsonl", "report.html"}
    assert rd.export("runs", "csv") == tmp_path / "runs.csv"
    with pytest.raises(KeyError):
        rd.previous("runs.jsonl")  # runs.jsonl is appended to, never moved aside


def test_locate_takes_a_directory_or_the_file(tmp_path: Path) -> None:
    assert locate(tmp_path, "verdicts.jsonl") == tmp_path / "verdicts.jsonl"
    assert locate(str(tmp_path), "verdicts.jsonl") == tmp_path / "verdicts.jsonl"
    given = tmp_path / "copy.jsonl"
    given.write_text("")
    assert locate(given, "verdicts.jsonl") == given
    assert locate(tmp_path / "missing.jsonl", "x") == tmp_path / "missing.jsonl"


def test_no_other_module_spells_a_record_file_name() -> None:
    # The module's constants are the only spelling in the package (messages and paths alike).
    here = Path(paths.__file__).resolve()
    root = here.parent.parent
    files = [*(root / "counterfact").glob("*.py")]
    for top in ("orchestrator", "records", "probes", "verdicts"):
        files += sorted((root / top).rglob("*.py"))
    names = ("runs.jsonl", "verdicts.jsonl", "arms.jsonl", "summary.json", "bisect.json")
    names += ("sweep.json", "live.json", "report.html", ".lock")
    found = [
        f"{path.relative_to(root)}: {name}"
        for path in files
        if path.resolve() != here
        for name in names
        if f'"{name}"' in path.read_text(encoding="utf-8")
    ]
    assert found == []
