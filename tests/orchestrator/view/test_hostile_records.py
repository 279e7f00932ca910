"""counterfact view over hostile or broken run directories (issue 45, item 6), on a real uvicorn
server at 127.0.0.1 with the real httpx client: Infinity and NaN in records, huge texts,
unreadable record files and a large ``runs.jsonl`` never give a 500 or an unbounded page.

The fuzz test copies a real run directory, puts one hostile value into one field of one
record line (or replaces a whole record file with garbage), and asks for every page.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from counterfact.orchestrator.view import rundir

from ...viewsweeps import Viewer, make_folder

PAGE_BOUND = 1 << 20
"""The largest HTML page any of these directories may produce (bytes)."""
RECORD_FILES = ("runs.jsonl", "verdicts.jsonl", "arms.jsonl", "summary.json", "live.json")
HUGE_CHARS = 3_000_000
TOKENS = ["Infinity", "-Infinity", "NaN", "1e400", "-1e400", "[" * 50_000 + "]" * 50_000]
"""Raw JSON values Python's json writes or reads but JSON itself has not (or nests too deep)."""
VALUES: list[object] = [None, -1, 10**30, "", "<script>x</script>\x00\u202e", [], {}, True]
VALUES += ["<" * HUGE_CHARS]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_folder(tmp_path_factory.mktemp("hostile") / "runs")


def _copy(runs: Path, served: Path, name: str = "copy") -> Path:
    copy = served / name
    shutil.copytree(runs / "after", copy)
    shutil.copy(runs / "running" / "live.json", copy / "live.json")
    return copy


def _with_raw(data: dict[str, object], key: str, raw: str) -> str:
    """``data`` as one JSON line with ``key``'s value written as ``raw`` JSON text."""
    marker = "\x00raw-value\x00"
    line = json.dumps(data | {key: marker}, ensure_ascii=False)
    return line.replace(json.dumps(marker, ensure_ascii=False), raw)


def _set(path: Path, line: int, key: str, raw: str) -> None:
    """Field ``key`` of line ``line`` of a JSONL file (or of a JSON file) set to ``raw``."""
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(_with_raw(data, key, raw), encoding="utf-8")
        return
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[line] = _with_raw(json.loads(lines[line]), key, raw)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _pages(run: str) -> list[tuple[str, dict[str, str]]]:
    question = {"run": run, "arm": "alt", "q": "q1"}
    return [
        ("/", {}),
        ("/sweep", {"run": run}),
        ("/arm", {"run": run, "arm": "alt"}),
        ("/arm", {"run": run, "arm": "base"}),
        ("/question", question),
        ("/output", question | {"seed": "0"}),
        ("/api/live", {"run": run}),
        ("/compare", {"a": run, "b": "after"}),
        ("/report", {"run": run}),
    ]


def _check_every_page(client: httpx.Client, run: str) -> dict[str, httpx.Response]:
    """Every page of ``run``: no 5xx (but a still-indexing 503), no HTML page over the bound."""
    replies: dict[str, httpx.Response] = {}
    for path, params in _pages(run):
        reply = client.get(path, params=params)
        waiting = reply.status_code == 503 and reply.text.startswith("not found yet")
        assert reply.status_code < 500 or waiting, (path, reply.status_code, reply.text[:500])
        if reply.headers["content-type"].startswith("text/html"):
            assert len(reply.content) < PAGE_BOUND, (path, len(reply.content))
        replies.setdefault(path, reply)
    return replies


def _served(tmp: Path, runs: Path) -> tuple[Path, Path]:
    root = tmp / "served"
    shutil.copytree(runs / "after", root / "after")
    return root, _copy(runs, root)


@pytest.fixture
def served(tmp_path: Path, runs: Path) -> tuple[Path, Path]:
    """(the served folder, its run directory ``copy`` to damage); ``after`` beside it."""
    return _served(tmp_path, runs)


@contextmanager
def _viewing(root: Path) -> Iterator[httpx.Client]:
    with Viewer(root) as viewer, httpx.Client(base_url=viewer.url, timeout=60) as client:
        yield client


def _challenger_line(path: Path) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(
        n
        for n, line in enumerate(lines)
        if (row := json.loads(line))["arm"] == "alt" and row["scenario"] == "q1"
    )


def test_infinity_and_nan_are_shown_as_text(served: tuple[Path, Path]) -> None:
    root, copy = served
    row = _challenger_line(copy / "verdicts.jsonl")
    _set(copy / "verdicts.jsonl", row, "samples", "Infinity")
    _set(copy / "verdicts.jsonl", row, "flips", "NaN")
    _set(copy / "runs.jsonl", 0, "seed", "Infinity")
    _set(copy / "live.json", 0, "runs_per_s", "-Infinity")
    with _viewing(root) as client:
        replies = _check_every_page(client, "copy")
        assert replies["/arm"].status_code == 200
        assert "<td>nan of inf</td><td>inf of 6</td>" in replies["/arm"].text
        assert "runs.jsonl</dt><dd>1 damaged line(s) skipped" in replies["/sweep"].text
        live = client.get("/api/live", params={"run": "copy"})
        assert live.status_code == 200 and live.json()["state"]["runs_per_s"] == "-inf"
        assert live.json()["fields"]["rate"] == "-inf runs/s"


def test_a_huge_failure_text_is_cut_with_its_length(served: tuple[Path, Path]) -> None:
    root, copy = served
    (copy / "live.json").unlink()  # a live sweep's status would come first
    summary = json.loads((copy / "summary.json").read_text(encoding="utf-8"))
    summary["execution"] |= {"status": "failed", "failure": "<" * HUGE_CHARS}
    (copy / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    with _viewing(root) as client:
        for path in ("/", "/sweep"):
            reply = client.get(path, params={"run": "copy"})
            assert reply.status_code == 200
            assert len(reply.content) < 100_000, (path, len(reply.content))
            # the list shows the failure, the sweep's page "failed — " and the failure
            assert re.search(r"… \(truncated, 3,000,0(00|09) chars\)", reply.text), path
            assert "&lt;" * 1_990 in reply.text  # the start of the text is shown


def test_a_summary_too_large_to_read_is_refused_from_its_size(
    served: tuple[Path, Path],
) -> None:
    root, copy = served
    (copy / "live.json").unlink()
    size = rundir.RECORD_LIMIT + 1
    with (copy / "summary.json").open("r+b") as fh:
        fh.truncate(size)  # sparse: its size says it all, reading it would not
    with _viewing(root) as client:
        for path in ("/", "/sweep"):
            reply = client.get(path, params={"run": "copy"})
            assert reply.status_code == 200
            assert f"summary.json holds {size:,} bytes" in reply.text
            assert "too large to show" in reply.text


@pytest.mark.parametrize("how", ["directory", "fifo"])
@pytest.mark.parametrize("name", ["runs.jsonl", "verdicts.jsonl"])
def test_an_unreadable_record_file_is_a_4xx_page_naming_it(
    served: tuple[Path, Path], name: str, how: str
) -> None:
    root, copy = served
    (copy / name).unlink()
    if how == "directory":
        (copy / name).mkdir()
    else:
        os.mkfifo(copy / name)
    with _viewing(root) as client:
        replies = _check_every_page(client, "copy")
        output = replies["/output"]
        assert output.status_code == 422, output.text
        assert f"cannot be read: {name} is not a regular file" in output.text
        assert f"unreadable: {name} is not a regular file" in replies["/sweep"].text


def _grow(runs_file: Path, lines: int) -> None:
    template = json.loads(runs_file.read_text(encoding="utf-8").splitlines()[0])
    with runs_file.open("w", encoding="utf-8") as fh:
        for n in range(lines):
            q, seed = divmod(n, 500)
            fh.write(json.dumps(template | {"scenario": f"q{q}", "seed": seed}) + "\n")


def test_a_large_runs_file_gives_its_first_page_before_it_is_indexed(
    served: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, copy = served
    for name in ("summary.json", "arms.jsonl", "verdicts.jsonl", "live.json"):
        (copy / name).unlink()
    lines = 40_000  # about 15 MB; a page reads one chunk of it (budget 0), a thread the rest
    _grow(copy / "runs.jsonl", lines)
    monkeypatch.setattr(rundir, "INDEX_BUDGET_S", 0.0)
    arm = json.loads((copy / "runs.jsonl").read_text(encoding="utf-8")[:2000].split("\n")[0])
    with _viewing(root) as client:
        first = client.get("/sweep", params={"run": "copy"})
        assert first.status_code == 200 and len(first.content) < PAGE_BOUND
        assert re.search(r"runs\.jsonl: \d+% read \([\d,]+ lines\) so far", first.text)
        assert "reload for the rest" in first.text
        deadline = time.monotonic() + 60
        while "reload for the rest" in (page := client.get("/sweep", params={"run": "copy"})).text:
            assert time.monotonic() < deadline, "the background index never finished"
            time.sleep(0.1)
        assert f"{lines:,} (0 failed)" in page.text, page.text
        last = client.get("/question", params={"run": "copy", "arm": arm["arm"], "q": "q79"})
        assert "rows 1-20 of 500" in last.text


HOSTILE = st.one_of(
    st.sampled_from(TOKENS),
    st.sampled_from(VALUES).map(lambda v: json.dumps(v, ensure_ascii=False)),
)
GARBAGE = ["directory", "fifo", "invalid utf-8", "cut in half", "empty", "binary"]


def _garble(path: Path, how: str, junk: bytes) -> None:
    data = path.read_bytes() if path.is_file() else b"{}"
    if path.exists():
        path.unlink()
    if how == "directory":
        path.mkdir()
    elif how == "fifo":
        os.mkfifo(path)
    else:
        damaged = {
            "invalid utf-8": data[:40] + b"\xff\xfe\xc3(" + data[40:],
            "cut in half": data[: len(data) // 2],
            "empty": b"",
            "binary": junk,
        }
        path.write_bytes(damaged[how])


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(RECORD_FILES),
    line=st.integers(min_value=0, max_value=10**6),
    key=st.integers(min_value=0, max_value=10**6),
    value=HOSTILE,
    garbage=st.none() | st.sampled_from(GARBAGE),
    junk=st.binary(min_size=1, max_size=256),
)
def test_hostile_records_never_give_a_500_or_an_unbounded_page(
    runs: Path,
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    line: int,
    key: int,
    value: str,
    garbage: str | None,
    junk: bytes,
) -> None:
    root, copy = _served(tmp_path_factory.mktemp("case"), runs)
    path = copy / name
    if garbage is not None:
        _garble(path, garbage, junk)
    else:
        text = path.read_text(encoding="utf-8")
        rows = [text] if path.suffix == ".json" else text.splitlines()
        at = line % len(rows)
        keys = sorted(json.loads(rows[at]))
        _set(path, at, keys[key % len(keys)], value)
    with _viewing(root) as client:
        _check_every_page(client, "copy")
