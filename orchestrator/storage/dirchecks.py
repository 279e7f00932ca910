"""What a run directory is, checked before a store writes into it: whether ``--fresh`` may move
it, whether a resume may read it (``sweep.json``, the first line of ``runs.jsonl``, links that
point outside it), and the tidying an opening store does (leftover temporary files, the previous
verdicts and report moved aside). The files' names are :mod:`counterfact.records.paths`'.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from datetime import datetime, timezone
from pathlib import Path

from pydantic import ValidationError

from counterfact.exceptions import ResumeConflictError, RunDirectoryError
from counterfact.records.fingerprint import Fingerprint, differences, owner_conflict
from counterfact.records.paths import (
    BISECT_FILE,
    FINGERPRINT_FILE,
    LOCK_FILE,
    PREVIOUS,
    RECORD_FILES,
    SUMMARY_FILE,
    RunPaths,
)


def move_aside(run_dir: Path) -> Path:
    """Rename ``run_dir`` to ``<run_dir>.moved-<UTC timestamp>`` and return the new path."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    target = run_dir.with_name(f"{run_dir.name}.moved-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = run_dir.with_name(f"{run_dir.name}.moved-{stamp}-{n}")
    run_dir.rename(target)
    return target


def refuse_to_move(run_dir: Path) -> None:
    """``--fresh`` moves only a run directory: never the working directory, a path that names a
    folder's parent, or a folder with files but no counterfact records.

    Raises:
        RunDirectoryError: ``run_dir`` is not something ``--fresh`` may move aside.
    """
    if run_dir.name in ("", ".", "..") or run_dir.resolve() == Path.cwd().resolve():
        msg = (
            f"--fresh would move {str(run_dir)!r}, the working directory or a parent, aside; "
            "pass --out runs/NAME (a run directory of its own)"
        )
        raise RunDirectoryError(msg, run_dir=run_dir)
    holds = any(run_dir.iterdir())
    if holds and not any(path.exists() for path in RunPaths(run_dir).records()):
        msg = (
            f"{str(run_dir)!r} is not a run directory (it holds files but no counterfact "
            f"records: none of {', '.join(RECORD_FILES)}), so --fresh will not move it; pass "
            "--out NEW_DIR"
        )
        raise RunDirectoryError(msg, run_dir=run_dir)


OWN_LITTER = (LOCK_FILE,)
"""What an interrupted first open leaves before any record (with ``.NAME.HEX.tmp`` files)."""


def refuse_foreign_folder(run_dir: Path) -> None:
    """A folder that holds files but no counterfact records is someone else's (``--out
    myproject``): records written into it would mix with its files.

    Raises:
        RunDirectoryError: naming a few of the files found.
    """
    if any(path.exists() for path in RunPaths(run_dir).records()):
        return
    others = sorted(
        p.name
        for p in run_dir.iterdir()
        if p.name not in OWN_LITTER and not (p.name.startswith(".") and p.name.endswith(".tmp"))
    )
    if others:
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        msg = (
            f"{str(run_dir)!r} is not a run directory (it holds {shown} but no counterfact "
            f"records: none of {', '.join(RECORD_FILES)}), so nothing is written into it; pass "
            "--out NEW_DIR (a folder of its own for the records)"
        )
        raise RunDirectoryError(msg, run_dir=run_dir)


def refuse_odd_records(run_dir: Path) -> None:
    """A record file that is a directory, FIFO or device cannot be read or replaced.

    Raises:
        RunDirectoryError: naming it.
    """
    for path in RunPaths(run_dir).records():
        if path.exists() and not path.is_file():
            msg = (
                f"{path} is not a regular file, so the run directory cannot be read; remove "
                "it, or pass --out NEW_DIR"
            )
            raise RunDirectoryError(msg, run_dir=run_dir)


def check_run_dir(run_dir: Path, fingerprint: Fingerprint | None, *, fresh: bool) -> None:
    """Refuse, before anything runs, a directory whose records a resume would misread.

    Raises:
        RunDirectoryError: not a directory, or records without a fingerprint.
        ResumeConflictError: the plan changes what old runs mean (the message lists each change).
    """
    if run_dir.exists() and not run_dir.is_dir():
        msg = f"run directory {str(run_dir)!r} exists and is not a directory; pass --out NEW_DIR"
        raise RunDirectoryError(msg, run_dir=run_dir)
    if run_dir.is_dir():
        refuse_foreign_links(run_dir)
        refuse_shared_files(run_dir)
        refuse_odd_records(run_dir)
    if fresh and run_dir.is_dir():
        refuse_to_move(run_dir)
    elif run_dir.is_dir():
        refuse_foreign_folder(run_dir)
    runs = RunPaths(run_dir).runs
    if fresh or not runs.exists() or runs.stat().st_size == 0:
        return
    stored = RunPaths(run_dir).fingerprint
    if not stored.exists():
        msg = (
            f"run directory {str(run_dir)!r} holds records but no {FINGERPRINT_FILE}, so a "
            "resume cannot check what they mean; pass --fresh (moves it aside) or --out NEW_DIR"
        )
        raise RunDirectoryError(msg, run_dir=run_dir)
    if fingerprint is None:
        return
    old = _with_owner(run_dir, read_fingerprint(stored))
    owner = owner_conflict(old, fingerprint)
    if owner is not None:
        msg = f"cannot use run directory {str(run_dir)!r}: {owner}"
        raise RunDirectoryError(msg, run_dir=run_dir)
    changes = differences(old, fingerprint)
    if changes:
        msg = (
            f"cannot resume {str(run_dir)!r}: this changes what recorded runs mean: "
            + "; ".join(changes)
            + ". Undo the change; or pass --out NEW_DIR; or --fresh --cache DIR, which moves "
            "the old directory aside and reuses its unchanged runs through the run cache DIR"
        )
        raise ResumeConflictError(msg, run_dir=run_dir)


def read_fingerprint(path: Path) -> Fingerprint:
    """``sweep.json``; one clear error when it is damaged (truncated, not a JSON mapping).

    Raises:
        RunDirectoryError: the file cannot be read as a fingerprint.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        msg = (
            f"{path} is damaged ({str(exc)[:120]}), so a resume cannot check what the records "
            "mean; pass --fresh (moves the directory aside) or --out NEW_DIR"
        )
        raise RunDirectoryError(msg, run_dir=path.parent) from exc
    if not isinstance(data, dict):
        msg = (
            f"{path} is not a JSON mapping (got {type(data).__name__}), so a resume cannot "
            "check what the records mean; pass --fresh or --out NEW_DIR"
        )
        raise RunDirectoryError(msg, run_dir=path.parent)
    try:
        return Fingerprint.model_validate(data)
    except ValidationError as exc:
        where = ".".join(str(p) for p in exc.errors()[0]["loc"])
        msg = (
            f"{path} is damaged ({where}: {exc.errors()[0]['msg']}), so a resume cannot check "
            "what the records mean; pass --fresh (moves the directory aside) or --out NEW_DIR"
        )
        raise RunDirectoryError(msg, run_dir=path.parent) from exc


def _with_owner(run_dir: Path, stored: Fingerprint) -> Fingerprint:
    """``sweep.json`` with its kind and name; directories written before they were recorded
    say it through their records (``bisect.json`` or ``summary.json``).
    """
    if "kind" in stored.model_fields_set:
        return stored
    for name, kind in ((BISECT_FILE, "bisection"), (SUMMARY_FILE, "sweep")):
        path = run_dir / name
        if path.is_file():
            try:
                owner = json.loads(path.read_text(encoding="utf-8")).get("name")
            except (ValueError, AttributeError):
                owner = None
            return Fingerprint.model_validate(stored.as_data() | {"kind": kind, "name": owner})
    return stored


FIRST_LINE_KEY = "runs_first_line_sha256"
"""The ``sweep.json`` key that ties ``runs.jsonl`` to its directory."""


def digest_of(line: str) -> str:
    """The SHA-256 of one line of text, as hex."""
    return hashlib.sha256(line.encode("utf-8")).hexdigest()


def first_line_digest(runs: Path, known: object) -> str | None:
    """The digest of ``runs.jsonl``'s first whole line, checked against ``sweep.json``'s
    (``known``); a ``runs.jsonl`` copied in from another run directory starts with another line.
    None when there is no whole first line yet (then the stored digest no longer applies: the
    next first line is recorded).

    Raises:
        RunDirectoryError: the first line is not the one this directory recorded.
    """
    if not runs.is_file():
        return None
    with runs.open("rb") as fh:
        first = fh.readline()
    if not first.endswith(b"\n"):
        return None  # empty, a torn first line, or one record still missing its newline
    digest = hashlib.sha256(first).hexdigest()
    if isinstance(known, str) and digest != known:
        msg = (
            f"{runs} is not the one this run directory recorded (its first line differs from "
            f"the one sweep.json names): runs copied in from elsewhere are not this sweep's "
            "evidence. Put the original back, or pass --fresh (moves the directory aside) or "
            "--out NEW_DIR"
        )
        raise RunDirectoryError(msg, run_dir=runs.parent)
    return digest


def refuse_foreign_links(run_dir: Path) -> None:
    """A record file that is a link to a file outside the directory would be truncated or
    appended to as if it were ours: refuse it.

    Raises:
        RunDirectoryError: naming the link and where it points.
    """
    inside = run_dir.resolve()
    for path in RunPaths(run_dir).records():
        if path.is_symlink() and inside not in path.resolve().parents:
            msg = (
                f"{path} is a link to {path.resolve()}, outside the run directory; counterfact "
                "writes only its own files: replace the link with the file, or pass --out NEW_DIR"
            )
            raise RunDirectoryError(msg, run_dir=run_dir)


SHARED_CHECKED = RECORD_FILES
"""The record files a store writes in place or replaces: none may be shared with another name."""


def refuse_shared_files(run_dir: Path) -> None:
    """A record file with a second hard link is another file's content too: appending to or
    truncating ``runs.jsonl`` would change it under its other name. Refuse it.

    Raises:
        RunDirectoryError: naming the file and its link count.
    """
    for name in SHARED_CHECKED:
        try:
            info = (run_dir / name).lstat()
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            msg = (
                f"{run_dir / name} has {info.st_nlink} hard links, so writing it would change "
                "another file too; counterfact writes only its own files: replace it with a "
                "copy (cp FILE FILE.new && mv FILE.new FILE), or pass --out NEW_DIR"
            )
            raise RunDirectoryError(msg, run_dir=run_dir)


def retire_previous(run_dir: Path) -> None:
    """Move the last verdicts and report aside (see :data:`PREVIOUS`)."""
    paths = RunPaths(run_dir)
    for name in PREVIOUS:
        with contextlib.suppress(FileNotFoundError):
            os.replace(run_dir / name, paths.previous(name))


def remove_litter(run_dir: Path) -> None:
    """Temporary files of atomic writes a killed driver left (``.NAME.HEX.tmp``): the lock is
    held, so no writer is alive to finish them.
    """
    for tmp in run_dir.glob(".*.tmp"):
        with contextlib.suppress(OSError):
            tmp.unlink()
