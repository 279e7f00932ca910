"""Atomic file writes: temp file beside the target, fsync, rename; readable like any output."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


_FILE_MODE = 0o666 & ~_umask()
"""What ``open(path, "w")`` would give (0644 under umask 022); ``mkstemp`` alone gives 0600."""


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, sync it, and rename it into place."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, _FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
