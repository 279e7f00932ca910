"""Reading a file that someone else may have planted: regular files only, up to a size limit.

``Path.read_bytes`` on a FIFO blocks until a writer comes (forever, in a sweep); on a link to
``/dev/zero`` it reads until ``MemoryError``. :func:`read_regular` opens without blocking and
without following a final symlink, checks the open file is a regular one no larger than
``limit`` bytes, and only then reads it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class NotARegularFile(OSError):
    """The path names a FIFO, device, directory, socket or symlink, not a regular file."""


class FileTooLarge(OSError):
    """The regular file holds more bytes than the caller's limit."""


def read_regular(path: Path, limit: int, *, follow: bool = False) -> bytes:
    """The bytes of ``path`` when it is a regular file of at most ``limit`` bytes.

    Args:
        path: the file to read.
        limit: the most bytes accepted.
        follow: follow a final symlink (to a regular file) instead of refusing it.

    Raises:
        FileNotFoundError: there is no such file.
        NotARegularFile: ``path`` is not a regular file (or is a symlink, unless ``follow``).
        FileTooLarge: it holds more than ``limit`` bytes.
        OSError: it could not be opened or read.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError) or not path.is_symlink():
            if path.is_dir():
                msg = f"{path} is a directory"
                raise NotARegularFile(msg) from exc
            raise
        msg = f"{path} is a symlink"
        raise NotARegularFile(msg) from exc
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            msg = f"{path} is not a regular file"
            raise NotARegularFile(msg)
        if info.st_size > limit:
            msg = f"{path} holds {info.st_size:,} bytes, more than the {limit:,} allowed"
            raise FileTooLarge(msg)
        data = handle.read(limit + 1)  # it may have grown since the stat
    if len(data) > limit:
        msg = f"{path} holds more than the {limit:,} bytes allowed"
        raise FileTooLarge(msg)
    return data
