"""counterfact view at eval-set size (issue 29): 10,000 questions x 5 seeds (a 50,000-line
runs.jsonl, 20,000 verdict rows) indexed once, pages paged and read by offset, a growing file
extended rather than read again; the index's handling of torn, damaged and replaced files."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from counterfact import compare_arms
from counterfact.orchestrator.view.files import RunDir
from counterfact.orchestrator.view.index import RunsIndex
from counterfact.orchestrator.view.rundir import RunView

from ...helpers import run_record
from ...viewsweeps import Viewer

QUESTIONS = 10_000
SEEDS = 5


def _run_line(scenario: str, seed: int, output: str) -> str:
    return run_record(seed, "base", scenario=scenario, output=output).model_dump_json() + "\n"


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """runs/big: 50,000 run lines, and 2 verdict rows per question copied from a real sweep."""
    root = tmp_path_factory.mktemp("scale")
    real = root / "real"
    compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        lambda ctx: "yes",
        samples=SEEDS,
        reference="yes",
        comparator="exact",
        executor="local",
        out=real,
    )
    rows = [json.loads(x) for x in (real / "verdicts.jsonl").read_text().splitlines()]
    out = root / "runs" / "big"
    out.mkdir(parents=True)
    template = _run_line("QID", 0, "OUT")
    with (out / "runs.jsonl").open("w", encoding="utf-8") as fh:
        for q in range(QUESTIONS):
            for seed in range(SEEDS):
                line = template.replace('"QID"', f'"q{q:05d}"').replace('"OUT"', f'"a{q}-{seed}"')
                fh.write(line.replace('"seed":0', f'"seed":{seed}'))
    with (out / "verdicts.jsonl").open("w", encoding="utf-8") as fh:
        for q in range(QUESTIONS):
            for row in rows:
                fh.write(json.dumps(row | {"scenario": f"q{q:05d}"}) + "\n")
    return root / "runs"


@pytest.fixture(scope="module")
def served(big: Path) -> Iterator[Viewer]:
    with Viewer(big) as v:
        yield v


def _until_indexed(c: httpx.Client) -> None:
    """Ask for the sweep's page until it no longer says it is indexing (issue 45: a page
    indexes for a bounded time, a background thread does the rest)."""
    deadline = time.monotonic() + 120
    while "reload for the rest" in c.get("/sweep", params={"run": "big"}).text:
        assert time.monotonic() < deadline, "the index never completed"
        time.sleep(0.1)


def test_an_eval_set_is_indexed_once_and_paged(served: Viewer, big: Path) -> None:
    with httpx.Client(base_url=served.url, timeout=120) as c:
        started = time.monotonic()
        c.get("/arm", params={"run": "big", "arm": "alt"})
        _until_indexed(c)
        indexed_s = time.monotonic() - started
        first = c.get("/arm", params={"run": "big", "arm": "alt"}).text
        view = served.catalog.get("big")
        assert view is not None
        assert view.runs.lines_indexed == QUESTIONS * SEEDS
        assert view.verdicts.lines_indexed == 2 * QUESTIONS
        assert "rows 1-100 of 10,000; page 1 of 100" in first
        assert first.count('href="/question?') == 100 and len(first) < 200_000
        later = c.get("/arm", params={"run": "big", "arm": "alt", "page": "73"}).text
        assert "rows 7,201-7,300 of 10,000" in later and ">q07299</a>" in later
        started = time.monotonic()
        page = c.get("/question", params={"run": "big", "arm": "base", "q": "q09876"}).text
        read_s = time.monotonic() - started
        assert [f"a9876-{s}" in page for s in range(SEEDS)] == [True] * SEEDS
        c.get("/sweep", params={"run": "big"})
        c.get("/")
        # no page read either file again
        assert view.runs.lines_indexed == QUESTIONS * SEEDS
        assert view.verdicts.lines_indexed == 2 * QUESTIONS
        print(f"indexed in {indexed_s:.2f} s; a question page then took {read_s:.3f} s")
        assert read_s < indexed_s


def test_a_growing_runs_file_is_extended_not_reread(served: Viewer, big: Path) -> None:
    with httpx.Client(base_url=served.url, timeout=120) as c:
        _until_indexed(c)
        view = served.catalog.get("big")
        assert view is not None
        before = view.runs.lines_indexed
        with (big / "big" / "runs.jsonl").open("a", encoding="utf-8") as fh:
            fh.writelines(_run_line("late", s, f"late {s}") for s in range(3))
            fh.write(_run_line("late", 3, "late 3")[:40])  # being written
        page = c.get("/question", params={"run": "big", "arm": "base", "q": "late"}).text
        assert "late 2" in page and "late 3" not in page
        assert view.runs.lines_indexed == before + 3


def _index(path: Path) -> RunsIndex:
    index = RunsIndex(path)
    index.refresh()
    return index


def test_a_torn_line_waits_until_it_is_whole(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    whole = _run_line("s", 1, "one")
    path.write_text(_run_line("s", 0, "zero") + whole[:25], encoding="utf-8")
    index = _index(path)
    assert sorted(index.seeds("base", "s")) == [0]
    with path.open("a", encoding="utf-8") as fh:
        fh.write(whole[25:])
    index.refresh()
    assert sorted(index.seeds("base", "s")) == [0, 1]
    assert index.record(index.seeds("base", "s")[1][0]).output == "one"


def test_a_damaged_line_is_counted_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    lines = [_run_line("s", 0, "a"), "{not json\n", '{"scenario": "s"}\n', _run_line("s", 1, "b")]
    path.write_text("".join(lines), encoding="utf-8")
    index = _index(path)
    assert index.damaged == 2 and sorted(index.seeds("base", "s")) == [0, 1]


def test_seeds_far_apart_negative_or_repeated_are_each_found(tmp_path: Path) -> None:
    # A cell's runs are an array indexed by seed; a seed far past it or below 0 turns the cell
    # into a dict, and a later line for a seed replaces the earlier (counted once).
    path = tmp_path / "runs.jsonl"
    seeds = [2, 0, 5_000_000, -3, 1]
    lines = [_run_line("s", seed, f"o{seed}") for seed in seeds]
    failed = run_record(0, "base", scenario="s", error=("E", "m")).model_dump_json() + "\n"
    path.write_text(_run_line("t", 4, "x") + "".join(lines) + failed, encoding="utf-8")
    index = _index(path)
    found = index.seeds("base", "s")
    assert sorted(found) == [-3, 0, 1, 2, 5_000_000]
    assert found[0][1] is False and all(ok for seed, (_, ok) in found.items() if seed != 0)
    assert index.record(found[5_000_000][0]).output == "o5000000"
    assert index.seeds("base", "t") == {4: index.run("base", "t", 4)}
    assert index.run("base", "t", 3) is None and index.run("base", "t", 99) is None
    assert index.run("base", "s", -3) == found[-3] and index.run("other", "s", 0) is None
    assert (index.arms["base"].runs, index.arms["base"].failed) == (6, 1)
    assert list(index.questions["base"]) == ["t", "s"]


def test_a_replaced_file_is_indexed_anew(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(_run_line("old", 0, "x") * 1, encoding="utf-8")
    index = _index(path)
    fresh = tmp_path / "new.jsonl"
    fresh.write_text(_run_line("new", 0, "y") + _run_line("new", 1, "z"), encoding="utf-8")
    fresh.replace(path)  # --fresh moves the old directory aside: a new file
    index.refresh()
    assert list(index.questions["base"]) == ["new"] and index.arms["base"].runs == 2


def test_a_fifo_named_like_a_record_is_refused(tmp_path: Path) -> None:
    import os

    from counterfact.orchestrator.view.files import Unreadable

    os.mkfifo(tmp_path / "summary.json")
    view = RunView(RunDir("x", tmp_path))
    with pytest.raises(Unreadable, match=r"summary\.json is not a regular file"):
        view.summary()  # returns at once instead of waiting for a writer


def test_a_line_over_the_limit_is_damaged_and_never_held_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from counterfact.orchestrator.view import index

    monkeypatch.setattr(index, "LINE_LIMIT", 2_000)
    monkeypatch.setattr(index, "CHUNK", 256)  # the long line spans many chunks
    path = tmp_path / "runs.jsonl"
    long = _run_line("s", 1, "y" * 5_000)
    path.write_text(_run_line("s", 0, "a") + long + _run_line("s", 2, "b"), encoding="utf-8")
    found = _index(path)
    assert found.damaged == 1 and sorted(found.seeds("base", "s")) == [0, 2]
    assert found.record(found.seeds("base", "s")[2][0]).output == "b"  # offsets still right
