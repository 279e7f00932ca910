"""The served folders: which run directories they hold, and opening their files safely.

A run directory is a folder holding any record file (``summary.json``, ``runs.jsonl``,
``live.json`` ...). The served folder may be one, or hold them up to :data:`MAX_DEPTH` levels
down (``runs/<name>``, ``runs/pr-12/<name>``). Only those directories can be named in a URL:
a page asks for a run by its id, and an id that is not in the list found here is unknown, so
no path outside the served folders (``..``, an absolute path, a symlink out) is ever opened.
Symlinked folders and files are not followed; a FIFO or device named like a record is refused.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from counterfact.records.paths import VIEWED

MAX_DEPTH = 3
"""Folder levels below the served folder searched for run directories."""
MAX_FOLDERS = 5000
"""Folders looked at per search (a served home directory must not stall the page)."""
COMPARE_PREFIX = "compare:"
"""Ids of the run directories under ``--compare``'s folder start with this."""


class Unreadable(OSError):
    """A record file that is not a regular file, or not one this viewer can read."""


@dataclass(frozen=True)
class RunDir:
    """One run directory found under a served folder."""

    id: str
    """Its name in URLs: the path relative to its served folder (``.`` for the folder itself),
    after :data:`COMPARE_PREFIX` for ``--compare``'s folder."""
    path: Path
    """Where it is."""


def _is_run_dir(names: set[str]) -> bool:
    return not VIEWED.isdisjoint(names)


def _listing(folder: Path) -> tuple[set[str], list[Path]]:
    """The entry names of ``folder`` and its subfolders (not hidden, not symlinks)."""
    names: set[str] = set()
    subfolders: list[Path] = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                names.add(entry.name)
                if not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False):
                    subfolders.append(Path(entry.path))
    except OSError:
        return set(), []
    return names, sorted(subfolders)


def _walk(root: Path) -> Iterator[Path]:
    """Run directories under ``root``, breadth first, not inside one another."""
    level = [root]
    seen = 0
    for depth in range(MAX_DEPTH + 1):
        below: list[Path] = []
        for folder in level:
            seen += 1
            if seen > MAX_FOLDERS:
                return
            names, subfolders = _listing(folder)
            if _is_run_dir(names):
                yield folder
            elif depth < MAX_DEPTH:
                below.extend(subfolders)
        level = below


def discover(root: Path, prefix: str = "") -> list[RunDir]:
    """Every run directory under ``root`` (itself included), in path order."""
    found = []
    for folder in _walk(root):
        rel = folder.relative_to(root).as_posix()
        found.append(RunDir(id=prefix + rel, path=folder))
    return sorted(found, key=lambda r: r.id)


def open_regular(path: Path) -> BinaryIO | None:
    """``path`` opened for binary reading, or None when there is no such file.

    Raises:
        Unreadable: it is a symlink, FIFO, device, socket or folder, or cannot be opened.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        msg = f"{path.name} cannot be opened ({exc.strerror or exc}); is it a symlink?"
        raise Unreadable(msg) from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        msg = f"{path.name} is not a regular file"
        raise Unreadable(msg)
    return os.fdopen(fd, "rb")


def read_whole(path: Path, limit: int) -> bytes | None:
    """The bytes of a regular file of at most ``limit`` bytes; None when it does not exist.

    Raises:
        Unreadable: not a regular file, or larger than ``limit``.
    """
    handle = open_regular(path)
    if handle is None:
        return None
    with handle:
        size = os.fstat(handle.fileno()).st_size
        data = b"" if size > limit else handle.read(limit + 1)
    if size > limit or len(data) > limit:
        shown = max(size, len(data))
        msg = f"{path.name} holds {shown:,} bytes, more than the {limit:,} shown: too large to show"
        raise Unreadable(msg)
    return data


def identity(path: Path) -> tuple[int, int, int, int] | None:
    """(device, inode, size, mtime) of ``path`` without following a symlink; None when absent."""
    try:
        info = path.lstat()
    except OSError:
        return None
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns
