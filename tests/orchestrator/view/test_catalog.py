"""The viewer's catalog keeps the indexes of the run directories browsed most recently, within
a count and an estimated size, so browsing many large run directories does not grow without
bound."""

from __future__ import annotations

import time
from pathlib import Path

from counterfact.orchestrator.view.catalog import Catalog, Limits
from counterfact.orchestrator.view.index import CELL_BYTES, RUN_BYTES
from counterfact.orchestrator.view.rundir import RunView

from ...helpers import run_record

RUNS = 50


def _served(root: Path, names: str) -> Path:
    """A folder holding one run directory per letter of ``names``, each with ``RUNS`` runs."""
    for name in names:
        folder = root / name
        folder.mkdir(parents=True)
        lines = (run_record(s, "base", scenario="q").model_dump_json() for s in range(RUNS))
        (folder / "runs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def _browse(catalog: Catalog, run_id: str) -> RunView:
    view = catalog.get(run_id)
    assert view is not None
    return view.indexed()


def test_least_recently_browsed_is_evicted_past_the_count(tmp_path: Path) -> None:
    catalog = Catalog(_served(tmp_path, "abc"), limits=Limits(count=2))
    a, b = _browse(catalog, "a"), _browse(catalog, "b")
    assert catalog.evicted == 0
    c = _browse(catalog, "c")
    assert catalog.evicted == 1
    assert catalog.get("b") is b
    assert catalog.get("c") is c
    again = catalog.get("a")  # indexed anew; b is now the least recently used
    assert again is not a
    assert again is not None and again.footprint() == 0
    assert catalog.evicted == 2
    assert _browse(catalog, "a").runs.held == RUNS
    assert catalog.get("c") is c
    assert catalog.get("b") is not b


def test_estimated_bytes_bound_the_indexes_kept(tmp_path: Path) -> None:
    one = RUNS * RUN_BYTES + CELL_BYTES  # one (arm, question)
    catalog = Catalog(_served(tmp_path, "ab"), limits=Limits(count=10, bytes=one + one // 2))
    a = _browse(catalog, "a")
    assert a.footprint() == one
    _browse(catalog, "b")
    assert catalog.evicted == 0  # evicted when a page asks, not while it indexes
    _browse(catalog, "b")
    assert catalog.evicted == 1
    assert catalog.get("a") is not a


def test_the_directory_asked_for_is_kept_however_large(tmp_path: Path) -> None:
    catalog = Catalog(_served(tmp_path, "a"), limits=Limits(count=1, bytes=1))
    a = _browse(catalog, "a")
    assert catalog.get("a") is a
    assert catalog.evicted == 0


def test_an_evicted_view_stops_indexing(tmp_path: Path) -> None:
    folder = tmp_path / "a"
    folder.mkdir()
    line = run_record(0, "base", scenario="q").model_dump_json() + "\n"
    (folder / "runs.jsonl").write_text(line * 20_000, encoding="utf-8")  # ~8 MB: many chunks
    view = Catalog(tmp_path).get("a")
    assert view is not None
    view.close()
    view.indexed(budget_s=0.0)  # one chunk read; no background thread goes on
    held = view.runs.held
    time.sleep(0.3)
    assert 0 < view.runs.held == held < 20_000
    assert not view.runs.complete


def test_the_list_page_is_trimmed_too(tmp_path: Path) -> None:
    """The list indexes every running sweep a little (to name its arms): it evicts as well."""
    catalog = Catalog(_served(tmp_path, "abc"), limits=Limits(count=2))
    views = catalog.runs()
    for view in views:
        view.indexed()
    catalog.trim()
    assert catalog.evicted == 1
    assert catalog.get(views[0].id) is not views[0]  # the least recently indexed
