"""Scenario sets from files and data files in the runner's identity (issue 21 items 1, 2)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from counterfact.exceptions import ConfigError, ResumeConflictError
from counterfact.orchestrator.config.loading import load_sweep
from counterfact.orchestrator.config.resolve import ResolvedSweep
from counterfact.orchestrator.drivers.sweep import run_sweep

from ...helpers import invoke

RUNNER = """
import json, pathlib
def run(ctx):
    corpus = json.loads((pathlib.Path(__file__).parent / "corpus.json").read_text())
    return corpus.get(ctx.scenario.inputs["q"], "unknown")
"""

QUESTIONS = [
    {"id": f"q{i}", "inputs": {"q": f"question {i}"}, "reference": f"answer {i}"} for i in range(40)
]


def _folder(tmp_path: Path, kind: str = "jsonl", extra: str = "") -> Path:
    (tmp_path / "runner.py").write_text(RUNNER)
    corpus = {q["inputs"]["q"]: q["reference"] for q in QUESTIONS}
    (tmp_path / "corpus.json").write_text(json.dumps(corpus))
    if kind == "jsonl":
        (tmp_path / "set.jsonl").write_text("\n".join(json.dumps(q) for q in QUESTIONS) + "\n")
    elif kind == "csv":
        with (tmp_path / "set.csv").open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["id", "q", "reference"])
            w.writerows([q["id"], q["inputs"]["q"], q["reference"]] for q in QUESTIONS)
    elif kind == "parquet":
        rows = [
            {"id": q["id"], "q": q["inputs"]["q"], "reference": q["reference"]} for q in QUESTIONS
        ]
        pq.write_table(pa.Table.from_pylist(rows), tmp_path / "set.parquet")
    elif kind == "yaml":
        (tmp_path / "set.yaml").write_text(json.dumps(QUESTIONS))  # JSON is YAML
    cfg = tmp_path / "sweep.yaml"
    cfg.write_text(
        f"name: files\nrunner: runner.py:run\nsamples: 2\ncomparator: exact\n"
        f"executor: local\nscenarios: {{file: set.{kind}}}\n"
        "arms: [{id: base}, {id: alt, facets: {x: 1}}]\n" + extra
    )
    return cfg


def _resolve(cfg: Path) -> ResolvedSweep:
    return load_sweep(cfg)


@pytest.mark.parametrize("kind", ["jsonl", "csv", "parquet", "yaml"])
def test_forty_scenarios_are_read_from_each_kind_of_file(tmp_path: Path, kind: str) -> None:
    sweep = _resolve(_folder(tmp_path, kind))
    assert [s.id for s in sweep.scenarios] == [q["id"] for q in QUESTIONS]
    assert sweep.scenarios[7].inputs == {"q": "question 7"}
    assert sweep.scenarios[7].reference == "answer 7"


@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_a_sweep_runs_on_a_set_of_forty(tmp_path: Path, kind: str) -> None:
    cfg = _folder(tmp_path, kind)
    result = run_sweep(_resolve(cfg), run_dir=tmp_path / "out")
    assert len({r.scenario for r in result.rows}) == 40
    assert all(r.flips == 0 for r in result.rows)  # every answer matches its reference


def test_limit_and_a_seeded_sample(tmp_path: Path) -> None:
    cfg = _folder(tmp_path, "jsonl")
    text = cfg.read_text().replace("{file: set.jsonl}", "{file: set.jsonl, limit: 5}")
    cfg.write_text(text)
    assert [s.id for s in _resolve(cfg).scenarios] == ["q0", "q1", "q2", "q3", "q4"]
    cfg.write_text(text.replace("limit: 5", "sample: {n: 6, seed: 3}"))
    first = [s.id for s in _resolve(cfg).scenarios]
    assert len(first) == 6 and first == sorted(first, key=lambda x: int(x[1:]))  # file order
    assert [s.id for s in _resolve(cfg).scenarios] == first  # the same seed, the same subset


@pytest.mark.parametrize(
    ("kind", "content", "message"),
    [
        ("jsonl", '{"id": "a"}\n{"id": "b"\n', r"set\.jsonl: line 2: not JSON"),
        ("jsonl", '{"id": "a"}\n{"inputs": {}}\n', r"line 2: id: Field required"),
        ("csv", "q,reference\nx,y\n", r"header: needs an 'id' column"),
        ("csv", "id,q\na,1\nb,2,3\n", r"row 2: has more cells than the header"),
        ("yaml", "id: a\n", r"must hold a list of scenarios"),
        ("jsonl", "", r"holds no scenario"),
    ],
)
def test_errors_name_the_line_or_row(tmp_path: Path, kind: str, content: str, message: str) -> None:
    cfg = _folder(tmp_path, kind)
    (tmp_path / f"set.{kind}").write_text(content)
    with pytest.raises(ConfigError, match=message):
        _resolve(cfg)


def test_a_missing_file_and_an_unknown_kind_are_refused(tmp_path: Path) -> None:
    cfg = _folder(tmp_path, "jsonl")
    cfg.write_text(cfg.read_text().replace("set.jsonl", "nope.jsonl"))
    with pytest.raises(ConfigError, match=r"scenarios\.file: 'nope\.jsonl' is not a file"):
        _resolve(cfg)
    cfg.write_text(cfg.read_text().replace("nope.jsonl", "set.xlsx"))
    with pytest.raises(ConfigError, match=r"unknown file kind"):
        _resolve(cfg)


def test_an_edited_scenario_file_is_refused_on_resume_naming_the_scenario(tmp_path: Path) -> None:
    cfg = _folder(tmp_path, "jsonl")
    run_sweep(_resolve(cfg), run_dir=tmp_path / "out")
    lines = (tmp_path / "set.jsonl").read_text().splitlines()
    lines[3] = json.dumps({"id": "q3", "inputs": {"q": "edited"}, "reference": "answer 3"})
    (tmp_path / "set.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(ResumeConflictError, match=r"scenarios\[q3\]"):
        run_sweep(_resolve(cfg), run_dir=tmp_path / "out")


def test_an_edited_runner_file_is_refused_on_resume_naming_it(tmp_path: Path) -> None:
    cfg = _folder(tmp_path, "jsonl", extra="runner_files: [corpus.json]\n")
    run_sweep(_resolve(cfg), run_dir=tmp_path / "out")
    corpus = json.loads((tmp_path / "corpus.json").read_text())
    corpus["question 3"] = "a stale answer"
    (tmp_path / "corpus.json").write_text(json.dumps(corpus))
    with pytest.raises(ResumeConflictError, match=r"runner_files\[corpus\.json\]: edited"):
        run_sweep(_resolve(cfg), run_dir=tmp_path / "out")


def test_the_run_cache_does_not_serve_runs_made_with_an_old_data_file(tmp_path: Path) -> None:
    cfg = _folder(
        tmp_path, "jsonl", extra=f"runner_files: ['*.json']\ncache_dir: {tmp_path / 'c'}\n"
    )
    first = run_sweep(_resolve(cfg), run_dir=tmp_path / "a")
    assert first.summary.execution.runs_from_cache == 0
    again = run_sweep(_resolve(cfg), run_dir=tmp_path / "b")
    assert (
        again.summary.execution.runs_from_cache
        == again.summary.execution.runs_used + again.summary.execution.runs_from_cache
    )
    (tmp_path / "corpus.json").write_text(json.dumps({"question 3": "changed"}))
    edited = run_sweep(_resolve(cfg), run_dir=tmp_path / "c2")
    assert edited.summary.execution.runs_from_cache == 0
    assert edited.row("alt", "q3").flips == 2  # the new corpus answered: not a stale cache hit


def test_runner_files_that_match_nothing_are_refused_and_validate_lists_them(
    tmp_path: Path,
) -> None:
    cfg = _folder(tmp_path, "jsonl", extra="runner_files: ['data/*.txt']\n")
    with pytest.raises(ConfigError, match=r"runner_files\[0\]: 'data/\*\.txt' matches no file"):
        _resolve(cfg)
    cfg.write_text(cfg.read_text().replace("'data/*.txt'", "corpus.json"))
    code, out, err = invoke("validate", str(cfg))
    assert code == 0, err
    (line,) = [x for x in out.splitlines() if x.startswith("identity: ")]
    assert "1 runner_files (corpus.json)" in line and "+files:" in line


def test_parquet_errors_name_the_row(tmp_path: Path) -> None:
    cfg = _folder(tmp_path, "parquet")
    rows = [{"id": "a", "q": "x"}, {"id": None, "q": "y"}]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "set.parquet")
    with pytest.raises(ConfigError, match=r"set\.parquet: row 2: id"):
        _resolve(cfg)
    (tmp_path / "set.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(ConfigError, match=r"set\.parquet"):
        _resolve(cfg)
