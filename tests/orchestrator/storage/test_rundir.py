"""The run directory on its own: lock, resume read-back, fingerprint, file modes, fresh."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from counterfact import ResumeConflictError, RunDirectoryError
from counterfact.orchestrator.storage.dirchecks import check_run_dir
from counterfact.orchestrator.storage.rundir import RunStore
from counterfact.orchestrator.storage.writable import record_line
from counterfact.records.fingerprint import Fingerprint
from counterfact.records.paths import FINGERPRINT_FILE, RUNS_FILE
from counterfact.records.runs import RunRecord

from ...helpers import run_record

FP = Fingerprint(runner="r@version:1", arms={"a": {"facets": {}}}, scenarios={"s": {}})


def record(seed: int, arm: str = "a") -> RunRecord:
    return run_record(seed, arm)


def test_appended_records_stream_back_to_the_next_stores_sink(tmp_path: Path) -> None:
    with RunStore(tmp_path / "d", fingerprint=FP) as store:
        store.append(record(0))
        store.append(record(1))
        store.append(record(1))  # a duplicate key is ignored, not written twice
        assert store.reused == 0 and store.records == []  # streamed, not held
    seen: list[int] = []
    with RunStore(tmp_path / "d", fingerprint=FP, sink=lambda r: seen.append(r.seed)) as again:
        assert again.reused == 2 and seen == [0, 1]
        assert again.has("s", "a", 1) and not again.has("s", "a", 2)
        assert again.get("s", "a", 1) is None  # not kept unless asked


def test_a_batch_is_on_disk_before_any_of_it_is_counted(tmp_path: Path) -> None:
    runs = tmp_path / "d" / RUNS_FILE
    lines_when_counted: list[int] = []

    def sink(_: RunRecord) -> None:  # read from outside the store: what a SIGKILL now leaves
        lines_when_counted.append(len(runs.read_bytes().splitlines()))

    with RunStore(tmp_path / "d", fingerprint=FP, sink=sink) as store:
        store.append(record(0))
        stored = store.append_batch([record(1), record(2), record(0), record(3)])
    assert [r.seed for r in stored] == [1, 2, 0, 3]  # the duplicate is returned, not stored
    assert lines_when_counted == [1, 4, 4, 4]  # the whole batch flushed before its first count
    assert [json.loads(x)["seed"] for x in runs.read_text().splitlines()] == [0, 1, 2, 3]


def test_a_batchs_lines_made_by_the_worker_are_written_as_given(tmp_path: Path) -> None:
    given = [record(0), record(1)]
    lines = [record_line(r)[1] for r in given]
    with RunStore(tmp_path / "d", fingerprint=FP) as store:
        store.append_batch(given, lines)
    assert (tmp_path / "d" / RUNS_FILE).read_text() == "".join(x + "\n" for x in lines)


def test_keep_holds_records_for_lookup(tmp_path: Path) -> None:
    with RunStore(tmp_path / "d", fingerprint=FP) as store:
        store.append(record(0))
    with RunStore(tmp_path / "d", fingerprint=FP, keep=True) as again:
        got = again.get("s", "a", 0)
        assert got is not None and got.output == "out 0"
        assert [r.seed for r in again.records] == [0]


def test_the_lock_is_released_when_the_body_raises(tmp_path: Path) -> None:
    with pytest.raises(ZeroDivisionError), RunStore(tmp_path / "d"):
        _ = 1 / 0
    with RunStore(tmp_path / "d") as store:  # would raise "in use" if the lock had leaked
        assert store.run_dir == tmp_path / "d"


def test_the_lock_is_released_when_opening_fails(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / RUNS_FILE).write_text('{"not": "a record"}\n{"also": "bad"}\n')
    (folder / FINGERPRINT_FILE).write_text(json.dumps(FP.as_data()))
    with pytest.raises(RunDirectoryError, match="line 1 is not a run record"), RunStore(folder):
        pass
    (folder / RUNS_FILE).write_text("")
    with RunStore(folder) as store:
        assert store.records == []


def test_fingerprint_is_merged_and_a_change_refused(tmp_path: Path) -> None:
    with RunStore(tmp_path / "d", fingerprint=FP) as store:
        store.append(record(0))
    more = Fingerprint(runner=FP.runner, arms={"b": {"facets": {"x": 1}}}, scenarios=FP.scenarios)
    with RunStore(tmp_path / "d", fingerprint=more):
        pass
    stored = json.loads((tmp_path / "d" / FINGERPRINT_FILE).read_text())
    assert set(stored["arms"]) == {"a", "b"} and stored["schema_version"] == 1
    changed = Fingerprint(runner="r@version:2", arms=FP.arms, scenarios=FP.scenarios)
    with pytest.raises(ResumeConflictError, match="runner: was 'r@version:1', now 'r@version:2'"):
        check_run_dir(tmp_path / "d", changed, fresh=False)


def test_fresh_moves_the_old_directory_aside(tmp_path: Path) -> None:
    with RunStore(tmp_path / "d", fingerprint=FP) as store:
        store.append(record(0))
    with RunStore(tmp_path / "d", fresh=True, fingerprint=FP) as store:
        assert store.moved_to is not None and store.moved_to.name.startswith("d.moved-")
        assert store.reused == 0
    assert (store.moved_to / RUNS_FILE).read_text().count("\n") == 1


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_records_are_created_readable_like_any_output(tmp_path: Path, umask: int) -> None:
    # In a fresh process, so the umask is the one a user's shell would have set before starting.
    script = (
        "import os, sys; from pathlib import Path\n"
        f"os.umask({umask})\n"
        "from counterfact.orchestrator.storage.atomic import write_atomic\n"
        "write_atomic(Path(sys.argv[1]), '{}')\n"
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "x.json")], check=True)
    mode = stat.S_IMODE((tmp_path / "x.json").stat().st_mode)
    assert mode == 0o666 & ~umask, oct(mode)  # mkstemp alone would give 0o600 whatever the umask
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]  # no temp file left behind


def test_without_a_directory_records_stay_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a store that wrote anywhere relative would write here
    with RunStore(None) as store:
        store.append(record(0))
        store.write_record("x.json", record(1))
        assert [r.seed for r in store.records] == [0]
    assert list(tmp_path.iterdir()) == []


def test_a_sweep_json_of_the_wrong_shape_is_one_clear_error(tmp_path: Path) -> None:
    # a JSON mapping whose arms are not an object: named by its field, nothing is resumed
    with RunStore(tmp_path / "d", fingerprint=FP) as store:
        store.append(record(0))
    (tmp_path / "d" / FINGERPRINT_FILE).write_text(json.dumps({"runner": "r", "arms": []}))
    with pytest.raises(RunDirectoryError, match=r"sweep\.json is damaged \(arms: .*JSON object"):
        check_run_dir(tmp_path / "d", FP, fresh=False)
