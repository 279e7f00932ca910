"""Records for other tools (issue 12): export, DataFrames, JSON Schemas."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from counterfact import ConfigError, load_runs, load_verdicts

from ....conftest import TESTS
from ....helpers import invoke

CONFIGS = sorted((TESTS.parent / "configs").glob("*.yaml"))
QUICKSTART = TESTS.parent / "configs" / "quickstart.yaml"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("exp") / "run"
    code, _, err = invoke("run", str(QUICKSTART), "--executor", "local", "--out", str(out))
    assert code == 0, err
    return out


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_export_round_trips_row_counts(run_dir: Path, fmt: str) -> None:
    import pandas as pd

    code, out, err = invoke("export", str(run_dir), "--format", fmt)
    assert code == 0, err
    names = ("runs", "verdicts", "arms")
    assert out.split() == [str(run_dir / f"{name}.{fmt}") for name in names]
    read = pd.read_parquet if fmt == "parquet" else pd.read_csv
    runs, verdicts = read(run_dir / f"runs.{fmt}"), read(run_dir / f"verdicts.{fmt}")
    assert len(runs) == _lines(run_dir / "runs.jsonl") == 32
    assert len(verdicts) == _lines(run_dir / "verdicts.jsonl") == 4
    assert len(read(run_dir / f"arms.{fmt}")) == _lines(run_dir / "arms.jsonl") == 3
    assert {"scenario", "arm", "seed", "output", "duration_s"} <= set(runs.columns)
    assert "test.p_value" in verdicts.columns and "test" not in verdicts.columns
    stale = verdicts.set_index("arm").loc["stale-index"]
    assert json.loads(stale["facets_diff.retrieval"]) == ["bm25", "stale-index"]  # JSON text


def test_dataframes_keep_python_values(run_dir: Path) -> None:
    verdicts = load_verdicts(run_dir)
    assert list(verdicts["arm"]) == ["baseline", "stale-index", "large-model", "rerank"]
    assert verdicts.set_index("arm").loc["stale-index", "facets_diff.retrieval"] == [
        "bm25",
        "stale-index",
    ]
    assert len(load_runs(run_dir)) == 32


def test_export_without_records_or_with_a_damaged_line(tmp_path: Path, run_dir: Path) -> None:
    code, _, err = invoke("export", str(tmp_path))
    assert code == 2 and "holds no records" in err and err.count("\n") == 1
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / "runs.jsonl").write_text((run_dir / "runs.jsonl").read_text() + "{oops\n")
    code, _, err = invoke("export", str(damaged))
    assert code == 2 and "runs.jsonl line 33 is not a run record" in err and "--fresh" not in err
    assert list(damaged.iterdir()) == [damaged / "runs.jsonl"]  # nothing half-written


def test_missing_extra_is_one_clear_error(monkeypatch: pytest.MonkeyPatch, run_dir: Path) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ConfigError, match=r"counterfact\[data\]"):
        load_runs(run_dir)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.name)
def test_config_schema_validates_the_shipped_configs(config: Path) -> None:
    import jsonschema

    code, out, err = invoke("schema")
    assert code == 0, err
    schema = json.loads(out)
    jsonschema.validate(yaml.safe_load(config.read_text(encoding="utf-8")), schema)
    with pytest.raises(jsonschema.ValidationError, match="sample"):  # unknown keys refused
        jsonschema.validate({**yaml.safe_load(config.read_text()), "sample": 5}, schema)


@pytest.mark.parametrize("kind", ["runs", "verdicts", "summary"])
def test_record_schemas_validate_written_records(kind: str, run_dir: Path) -> None:
    import jsonschema

    schema = json.loads(invoke("schema", kind)[1])
    if kind == "summary":
        jsonschema.validate(json.loads((run_dir / "summary.json").read_text()), schema)
        return
    name = "runs.jsonl" if kind == "runs" else "verdicts.jsonl"
    for line in (run_dir / name).read_text().splitlines():
        jsonschema.validate(json.loads(line), schema)


def test_parquet_export_with_mixed_value_types(tmp_path: Path) -> None:
    import pandas as pd

    from counterfact import compare_arms

    arms = [
        {"id": "base", "facets": {"temperature": "default"}},
        {"id": "warm", "facets": {"temperature": 0.7}},
    ]
    compare_arms(
        arms,
        "runners.py:echo_arm",
        base_dir=TESTS,
        reference="yes",
        executor="local",
        out=tmp_path / "o",
    )
    code, _, err = invoke("export", str(tmp_path / "o"))
    assert code == 0, err
    verdicts = pd.read_parquet(tmp_path / "o" / "verdicts.parquet")
    warm = verdicts.set_index("arm").loc["warm"]
    assert json.loads(warm["facets_diff.temperature"]) == ["default", 0.7]


def test_missing_values_stay_missing_in_mixed_columns(tmp_path: Path) -> None:
    import pandas as pd

    from counterfact import compare_arms

    arms = [
        {"id": "base", "facets": {"t": "default"}},
        {"id": "warm", "facets": {"t": 0.7}},
        {"id": "cold", "facets": {"t": "default", "k": 2}},
    ]
    compare_arms(
        arms,
        "runners.py:echo_arm",
        base_dir=TESTS,
        reference="yes",
        executor="local",
        out=tmp_path / "o",
    )
    assert invoke("export", str(tmp_path / "o"), "--format", "csv")[0] == 0
    verdicts = pd.read_csv(tmp_path / "o" / "verdicts.csv").set_index("arm")
    assert pd.isna(verdicts.loc["base", "facets_diff.t"])  # absent: empty, not the text "NaN"
    assert json.loads(verdicts.loc["warm", "facets_diff.t"]) == ["default", 0.7]


def test_csv_cells_a_spreadsheet_would_run_are_kept_as_text(tmp_path: Path) -> None:
    import csv

    from counterfact import compare_arms

    arms = [{"id": "base"}, {"id": "evil", "facets": {"answer": '=HYPERLINK("http://x","y")'}}]
    compare_arms(
        arms,
        "runners.py:echo_arm",
        base_dir=TESTS,
        reference="yes",
        executor="local",
        out=tmp_path / "o",
    )
    code, _, err = invoke("export", str(tmp_path / "o"), "--format", "csv")
    assert code == 0, err
    with (tmp_path / "o" / "runs.csv").open(newline="") as fh:
        outputs = {row["output"] for row in csv.DictReader(fh)}
    assert outputs == {"yes", '\'=HYPERLINK("http://x","y")'}
    assert not any(cell.startswith("=") for cell in outputs)


def test_runs_carry_their_judgement_and_join_the_verdicts(run_dir: Path) -> None:
    # Issue 21 item 5: per-run flipped and similarity, as the row judged each run.
    runs, verdicts = load_runs(run_dir), load_verdicts(run_dir)
    flips = runs.groupby("arm")["flipped"].sum()
    for _, row in verdicts.iterrows():
        assert flips[row["arm"]] == row["flips"]
    stale = runs[runs["arm"] == "stale-index"].sort_values("seed")
    (rec,) = [r for r in verdicts.to_dict("records") if r["arm"] == "stale-index"]
    assert list(stale["similarity"].round(9)) == [round(x, 9) for x in rec["similarities"]]


def test_column_types_are_stable_whatever_the_data(run_dir: Path) -> None:
    import pyarrow.parquet as pq

    code, _, err = invoke("export", str(run_dir), "--format", "parquet")
    assert code == 0, err
    schema = pq.read_schema(run_dir / "runs.parquet")
    # No run failed: the error columns exist all the same, typed as text.
    text = ("string", "large_string")
    assert str(schema.field("error.type").type) in text
    assert str(schema.field("error.message").type) in text
    assert "error" not in schema.names
    assert str(schema.field("seed").type) == "int64"
    assert str(schema.field("attempts").type) == "int64"
    assert str(schema.field("flipped").type) == "bool"
    verdicts = pq.read_schema(run_dir / "verdicts.parquet")
    assert str(verdicts.field("sequential.seeds_used").type) == "int64"  # null everywhere here
    assert str(verdicts.field("flips").type) == "int64"


def test_a_bisection_exports_its_probes(tmp_path: Path) -> None:
    import pandas as pd

    from counterfact import load_probes

    cfg = tmp_path / "b.yaml"
    cfg.write_text(
        f"name: b\nrunner: {TESTS / 'runners.py'}:needs_two_removed\nreference: wrong\n"
        "comparator: exact\nexecutor: local\nbisect: {suspects: [p, x, q, y], max_probes: 12}\n"
    )
    out = tmp_path / "o"
    code, _, err = invoke("bisect", str(cfg), "--out", str(out))
    assert code == 0, err
    code, printed, err = invoke("export", str(out), "--format", "parquet")
    assert code == 0, err
    assert str(out / "probes.parquet") in printed.split()
    probes = pd.read_parquet(out / "probes.parquet")
    loaded = load_probes(out)
    record = json.loads((out / "bisect.json").read_text())
    assert len(probes) == len(loaded) == len(record["probes"])
    assert list(loaded["probe"]) == list(range(1, len(record["probes"]) + 1))
    assert list(loaded["flips"]) == [p["flips"] for p in record["probes"]]


def _varied(tmp_path: Path) -> Path:
    from counterfact import compare_arms

    arms = [{"id": "base", "facets": {"t": "default"}}, {"id": "warm", "facets": {"t": 0.7}}]
    out = tmp_path / "o"
    compare_arms(
        arms,
        "runners.py:varied_records",
        base_dir=TESTS,
        samples=12,
        scenarios=[{"id": f"s{i}", "reference": "yes"} for i in range(6)],
        comparator="exact",
        executor="local",
        out=out,
    )
    return out


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_streamed_runs_table_is_the_one_built_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    # Reference: the table written before export streamed, built whole in memory
    # (load_runs, flattened as export flattens it), against chunks of 5 of 144 runs, so
    # columns missing, null or of one kind within a chunk must still be typed as the log's.
    import pandas as pd

    from counterfact.orchestrator.drivers.outputs import export as exporting
    from counterfact.orchestrator.drivers.outputs import export_runs

    out = _varied(tmp_path)
    whole = exporting._flat(load_runs(out))
    if fmt == "csv":
        for column in whole.columns:
            whole[column] = whole[column].map(exporting._as_text)
        want = whole.to_csv(index=False, **export_runs.CSV_OPTIONS)
    else:
        whole.to_parquet(tmp_path / "whole.parquet", index=False)
    monkeypatch.setattr(export_runs, "CHUNK", 5)
    exporting.export(out, fmt)
    if fmt == "csv":
        assert (out / "runs.csv").read_bytes().decode("utf-8") == want
        return
    import pyarrow.parquet as pq

    pd.testing.assert_frame_equal(
        pd.read_parquet(out / "runs.parquet"), pd.read_parquet(tmp_path / "whole.parquet")
    )
    got, ref = pq.read_schema(out / "runs.parquet"), pq.read_schema(tmp_path / "whole.parquet")
    assert got.remove_metadata().equals(ref.remove_metadata())


def test_runs_are_read_a_chunk_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    from counterfact.orchestrator.drivers.outputs import export_runs

    monkeypatch.setattr(export_runs, "CHUNK", 3)
    pulled = []

    class Record:
        def __init__(self, i: int) -> None:
            self.i = i

        def model_dump(self, **_: object) -> dict[str, int]:
            return {"seed": self.i}

    def records():  # type: ignore[no-untyped-def]
        for i in range(10):
            pulled.append(i)
            yield Record(i)

    batches = export_runs.chunks(records())  # type: ignore[arg-type]
    assert len(next(batches)) == 3 and len(pulled) == 3  # not the whole log
    assert [len(b) for b in batches] == [3, 3, 1]


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_the_arm_level_verdicts_are_exported(tmp_path: Path, fmt: str) -> None:
    import pandas as pd

    from counterfact import compare_arms
    from counterfact.records import read_arms

    compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}, {"id": "other", "facets": {"x": 2}}],
        "runners.py:echo_arm",
        base_dir=TESTS,
        samples=3,
        scenarios=[{"id": f"q{i}", "reference": "yes"} for i in range(6)],
        executor="local",
        out=tmp_path / "o",
    )
    assert invoke("export", str(tmp_path / "o"), "--format", fmt)[0] == 0
    path = tmp_path / "o" / f"arms.{fmt}"
    table = pd.read_parquet(path) if fmt == "parquet" else pd.read_csv(path)
    records = read_arms(tmp_path / "o")
    assert list(table["arm"]) == [r.arm for r in records] == ["alt", "other"]
    assert list(table["verdict"]) == [r.verdict for r in records]
    assert list(table["questions"]) == [6, 6]
    assert "effect.diff" in table.columns and "stratified.p_value" in table.columns


def test_a_bare_carriage_return_stays_inside_its_csv_cell(tmp_path: Path) -> None:
    # issue 27 item 3: an unquoted CR started a new spreadsheet row, the text after it in A
    import csv

    from counterfact import compare_arms

    evil = "yes\r=cmd|' /C calc'!A0"
    arms = [{"id": "base"}, {"id": "evil", "facets": {"answer": evil}}]
    compare_arms(
        arms,
        "runners.py:echo_arm",
        base_dir=TESTS,
        reference="yes",
        executor="local",
        out=tmp_path / "o",
    )
    assert invoke("export", str(tmp_path / "o"), "--format", "csv")[0] == 0
    raw = (tmp_path / "o" / "runs.csv").read_bytes()
    assert b'"yes\r=cmd' in raw  # quoted: the CR is inside the cell, not a row's end
    assert raw.count(b"\r\n") == raw.count(b"\n")  # every row ends CRLF (RFC 4180)
    with (tmp_path / "o" / "runs.csv").open(newline="", encoding="utf-8") as fh:
        outputs = {row["output"] for row in csv.DictReader(fh)}
    assert evil in outputs
