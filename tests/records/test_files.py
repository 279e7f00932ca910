"""records/files.py: the one reader of each record file, on a real run directory."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

from counterfact import DegenerateBandWarning, compare_arms
from counterfact.records import (
    RecordFileError,
    RunPaths,
    read_arms,
    read_bisect,
    read_live,
    read_runs,
    read_summary,
    read_verdicts,
)
from counterfact.records.files import RunLog, parse_arms

TESTS = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished sweep's directory (2 arms x 3 seeds, in-process)."""
    out = tmp_path_factory.mktemp("swept") / "o"
    with pytest.warns(DegenerateBandWarning):  # every output equal: the band has no width
        compare_arms(
            [{"id": "base"}, {"id": "alt", "facets": {"answer": "nope"}}],
            "runners.py:echo_arm",
            base_dir=TESTS,
            samples=3,
            executor="local",
            out=out,
        )
    return out


@pytest.fixture
def copy(swept: Path, tmp_path: Path) -> RunPaths:
    return RunPaths(Path(shutil.copytree(swept, tmp_path / "o")))


def test_each_reader_takes_the_directory_or_the_file(swept: Path) -> None:
    rd = RunPaths(swept)
    # Every (arm, seed) once; the line order is the plan's (seed 0 of each arm, then blocks).
    assert sorted((r.arm, r.seed) for r in read_runs(swept)) == sorted(
        (arm, seed) for seed in range(3) for arm in ("base", "alt")
    )
    assert list(read_runs(rd.runs)) == list(read_runs(swept))
    assert (
        [v.arm for v in read_verdicts(swept)]
        == ["base", "alt"]
        == [v.arm for v in read_verdicts(rd.verdicts)]
    )
    assert read_summary(rd.summary) == read_summary(swept)
    assert read_arms(swept) == read_arms(rd.arms) == list(read_summary(swept).arms)
    assert [s.id for s in read_summary(swept).scenarios] == ["default"]


def test_an_unterminated_last_line_is_skipped_by_read_runs_and_kept_by_a_resume(
    copy: RunPaths,
) -> None:
    text = copy.runs.read_text(encoding="utf-8")
    copy.runs.write_text(text.rstrip("\n"), encoding="utf-8")  # complete, but no newline
    assert len(list(read_runs(copy.path))) == 5  # as read_runs always did: may be mid-write
    log = RunLog(copy.runs)
    assert len(list(log)) == 6 and log.torn is False  # what a resume keeps
    copy.runs.write_text(text + text.splitlines()[0][:40], encoding="utf-8")  # torn by a crash
    log = RunLog(copy.runs)
    assert len(list(log)) == 6 and log.torn is True
    assert log.good_bytes == len(text.encode())


def test_a_damaged_run_line_names_the_file_and_line(copy: RunPaths) -> None:
    lines = copy.runs.read_text(encoding="utf-8").splitlines(keepends=True)
    copy.runs.write_text("".join([lines[0], '{"seed": "x"}\n', *lines[1:]]), encoding="utf-8")
    with pytest.raises(RecordFileError, match=r"runs\.jsonl line 2 is not a run record") as got:
        list(read_runs(copy.path))
    assert got.value.path == copy.runs
    assert str(got.value).endswith("the file is corrupt beyond a torn last line")
    with pytest.raises(RecordFileError, match=r"beyond a torn last line — repair it$"):
        list(RunLog(copy.runs, advice="repair it"))


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("{not json", r"verdicts\.jsonl line 2 is not JSON \(.*\); the file is damaged"),
        ("[1, 2]", r"verdicts\.jsonl line 2 is not a JSON object; the file is damaged"),
        ('{"scenario": "s"}', r"verdicts\.jsonl record 2 is not a verdict record: "),
    ],
)
def test_a_damaged_verdict_line_says_what_is_wrong(copy: RunPaths, line: str, says: str) -> None:
    first = copy.verdicts.read_text(encoding="utf-8").splitlines()[0]
    copy.verdicts.write_text(f"{first}\n{line}\n", encoding="utf-8")
    with pytest.raises(RecordFileError, match=says):
        read_verdicts(copy.path)


def test_a_damaged_summary_names_the_field(copy: RunPaths) -> None:
    copy.summary.write_text('{"schema_version": 1}', encoding="utf-8")
    with pytest.raises(RecordFileError, match=r"summary\.json is not a valid SweepSummary record"):
        read_summary(copy.path)
    copy.summary.write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match=r"summary\.json is not a valid SweepSummary record"):
        read_summary(copy.path)  # RecordFileError is a ValueError, as pydantic's errors are


def test_a_missing_file_is_file_not_found(swept: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_bisect(swept)  # a sweep writes no bisect.json
    with pytest.raises(FileNotFoundError):
        read_live(swept / "nowhere")  # (a sweep does write live.json)
    with pytest.raises(FileNotFoundError):
        list(read_runs(swept / "nowhere"))


def test_parse_arms_reads_bytes_and_leaves_errors_to_the_caller() -> None:
    assert parse_arms(b"\n  \n") == []
    with pytest.raises(ValidationError):
        parse_arms(b'{"arm": 1}\n')


def poison(runs: Path, value: str) -> None:
    """Every line but the first (the one sweep.json fingerprints) reports ``value`` tokens, as a
    server whose usage lied did before runners' costs were bounded."""
    lines = runs.read_text(encoding="utf-8").splitlines(keepends=True)
    poisoned = [json.loads(x) | {"cost": {"tokens": value, "usd": 0.5}} for x in lines[1:]]
    text = "".join(json.dumps(x).replace(f'"{value}"', value) + "\n" for x in poisoned)
    runs.write_text(lines[0] + text, encoding="utf-8")


@pytest.mark.parametrize("value", ["1e308", "Infinity", "NaN", "-5", "2e15"])
def test_a_cost_no_run_can_spend_is_read_as_refused_not_summed(copy: RunPaths, value: str) -> None:
    poison(copy.runs, value)
    runs = list(read_runs(copy.path))[1:]
    assert all(r.cost == {"usd": 0.5} for r in runs)  # the good entry is kept
    assert {r.cost_refused["tokens"] for r in runs if r.cost_refused} == {
        repr(float(value)) if "e" in value or value[0].isalpha() else value
    }


def test_a_verdict_line_a_poisoned_total_nulled_names_the_field(copy: RunPaths) -> None:
    record = json.loads(copy.verdicts.read_text(encoding="utf-8").splitlines()[0])
    record["samples"] = None  # as an old engine wrote an infinite number: null
    copy.verdicts.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(
        RecordFileError, match=r"record 1 is not a verdict record: samples: .*\(got None\)"
    ):
        read_verdicts(copy.path)


def test_a_400_digit_integer_cost_is_refused_not_a_traceback(copy: RunPaths) -> None:
    # review finding: math.isfinite(10**400) raised OverflowError out of the reader, and every
    # resume, report and verdict of the directory with it
    poison(copy.runs, "1" + "0" * 400)
    runs = list(read_runs(copy.path))[1:]
    assert all(r.cost == {"usd": 0.5} for r in runs)
    assert {r.cost_refused["tokens"] for r in runs if r.cost_refused} == {
        "10000000000000000000... (401 digits)"
    }
