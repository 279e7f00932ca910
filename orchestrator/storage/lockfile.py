"""Opening a run directory's ``.lock`` safely: never through a link, never blocking, never a
traceback.

A plain ``open(path, "a")`` follows a symlink (creating its target wherever it points), waits
forever on a FIFO until a reader comes, and raises a bare ``PermissionError`` in a read-only
directory.
:func:`open_lock` refuses each with one :class:`RunDirectoryError` line.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import IO

from counterfact.exceptions import RunDirectoryError

_FLAGS = (
    os.O_WRONLY
    | os.O_APPEND
    | os.O_CREAT
    | os.O_NONBLOCK
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def open_lock(path: Path) -> IO[str]:
    """The ``.lock`` at ``path``, opened for appending (created when missing).

    Raises:
        RunDirectoryError: it is a symlink or not a regular file, or it cannot be opened.
    """
    run_dir = path.parent
    if path.is_symlink():
        msg = (
            f"{path} is a symlink (to {os.readlink(path)}); counterfact locks only its own "
            f"file: remove the link (rm {path}) or pass --out NEW_DIR"
        )
        raise RunDirectoryError(msg, run_dir=run_dir)
    try:
        fd = os.open(path, _FLAGS, 0o666)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if path.exists() and not path.is_file():
            reason = "it is not a regular file"
            msg = f"{path} is not a regular file; remove it, or pass --out NEW_DIR"
        else:
            msg = (
                f"cannot open {path}: {reason}; make the run directory writable (a resume "
                "appends to it), or pass --out NEW_DIR"
            )
        raise RunDirectoryError(msg, run_dir=run_dir) from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        msg = f"{path} is not a regular file; remove it, or pass --out NEW_DIR"
        raise RunDirectoryError(msg, run_dir=run_dir)
    return os.fdopen(fd, "a", encoding="utf-8")
