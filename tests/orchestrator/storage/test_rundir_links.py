"""Record files shared through hard links and a ``.lock`` that is a link are refused before a
store writes (issue 27 item 6), and a ``.lock`` that cannot be opened is one line (item 10):
a hard-linked ``runs.jsonl`` was truncated and appended to, so the other name's file changed; a
``.lock`` symlink created its target.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from counterfact import RunDirectoryError
from counterfact.orchestrator.storage.dirchecks import check_run_dir
from counterfact.orchestrator.storage.rundir import RunStore
from counterfact.records.fingerprint import Fingerprint
from counterfact.records.paths import FINGERPRINT_FILE, LOCK_FILE, RUNS_FILE

from ...helpers import run_record

FP = Fingerprint(runner="r@version:1", arms={"a": {"facets": {}}}, scenarios={"s": {}})


def _resumable(folder: Path) -> None:
    with RunStore(folder, fingerprint=FP) as store:
        store.append(run_record(0, "a"))


@pytest.mark.parametrize("name", [RUNS_FILE, FINGERPRINT_FILE])
def test_a_hard_linked_record_file_is_refused_and_left_alone(tmp_path: Path, name: str) -> None:
    folder = tmp_path / "d"
    _resumable(folder)
    other = tmp_path / "elsewhere.txt"
    os.link(folder / name, other)
    before = other.read_bytes()
    with pytest.raises(RunDirectoryError, match=rf"{name} has 2 hard links") as info:
        RunStore(folder, fingerprint=FP).__enter__()
    assert "\n" not in str(info.value) and "--out NEW_DIR" in str(info.value)
    assert other.read_bytes() == before


def test_a_hard_link_is_refused_by_validate_s_check_too(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    _resumable(folder)
    os.link(folder / RUNS_FILE, tmp_path / "copy.jsonl")
    with pytest.raises(RunDirectoryError, match="hard links"):
        check_run_dir(folder, FP, fresh=False)


def test_a_lock_that_is_a_symlink_is_refused_and_creates_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    target = tmp_path / "victim"
    (folder / LOCK_FILE).symlink_to(target)
    with pytest.raises(RunDirectoryError, match=r"\.lock is a symlink"):
        RunStore(folder, fingerprint=FP).__enter__()
    assert not target.exists()


def test_a_lock_that_is_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    os.mkfifo(folder / LOCK_FILE)
    with pytest.raises(RunDirectoryError, match=r"\.lock is not a regular file"):
        RunStore(folder, fingerprint=FP).__enter__()


def test_a_lock_that_cannot_be_opened_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "d"
    _resumable(folder)
    real_open = os.open

    def read_only(path: object, flags: int, *args: object) -> int:
        if str(path).endswith(LOCK_FILE):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", read_only)
    with pytest.raises(RunDirectoryError, match=r"cannot open .*\.lock: Permission denied; "):
        RunStore(folder, fingerprint=FP).__enter__()


def test_a_sweep_json_that_is_a_directory_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    _resumable(folder)
    (folder / FINGERPRINT_FILE).unlink()
    (folder / FINGERPRINT_FILE).mkdir()
    with pytest.raises(RunDirectoryError, match=r"sweep\.json is not a regular file") as info:
        RunStore(folder, fingerprint=FP).__enter__()
    assert "\n" not in str(info.value)


def test_a_folder_of_other_files_is_not_written_into(tmp_path: Path) -> None:
    folder = tmp_path / "myproject"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(RunDirectoryError, match=r"not a run directory .*pass --out NEW_DIR"):
        RunStore(folder, fingerprint=FP).__enter__()
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]


def test_a_folder_holding_only_a_lock_left_behind_is_used(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / LOCK_FILE).write_text("")
    (folder / ".runs.jsonl.abc.tmp").write_text("")
    with RunStore(folder, fingerprint=FP) as store:
        store.append(run_record(0, "a"))
