"""Atomic file writes: temp file beside the target, fsync, rename; readable like any output."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from counterfact.exceptions import RecordWriteError


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, sync it, and rename it into place.

    The temporary file is created with mode 0666 minus the process umask, as ``open(path, "w")``
    would (0644 under umask 022); ``tempfile.mkstemp`` would give 0600.
    """
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextmanager
def writing(path: Path) -> Iterator[None]:
    """Turn an ``OSError`` while writing ``path`` into one :class:`RecordWriteError` line."""
    try:
        yield
    except OSError as exc:
        raise write_error(path, exc) from exc


def write_error(path: Path, exc: OSError) -> RecordWriteError:
    """The one-line error for ``exc``, raised while writing ``path``."""
    reason = exc.strerror or str(exc)
    msg = (
        f"cannot write {path.name} in {path.parent}: {reason}; free space (or make the "
        "directory writable) and run the same command again: what was written is kept"
    )
    return RecordWriteError(msg, path=path, run_dir=path.parent)


def write_json(path: Path, data: Any, *, sort_keys: bool = False) -> None:
    """Write ``data`` as indented JSON, atomically."""
    with writing(path):
        write_atomic(path, json.dumps(data, indent=2, sort_keys=sort_keys, default=str) + "\n")
