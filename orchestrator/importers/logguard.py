"""Size limits on an Inspect AI log, checked before Inspect reads it (issue 27 item 8).

An ``.eval`` log is a zip: a 4 MB zip bomb reached 4.4 GB before failing, and a 100 MB
completion took 3.5 GB to read. :func:`check_log` reads the file with a bounded reader (a
regular file of at most :data:`MAX_LOG_BYTES`), then checks the entries' *declared* sizes and
their count before anything is decompressed: Inspect reads a local ``.eval`` with the standard
library's ``zipfile``, whose member streams stop at the declared size, so the declared sizes
bound what is decompressed. :func:`check_completion` bounds each completion once read (a JSON
log has no entries to check). Each limit is a module constant; a log past one is a one-line
``ConfigError`` naming the log (and the sample).
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

from counterfact.exceptions import ConfigError
from counterfact.orchestrator.storage.boundedread import read_regular

MAX_LOG_BYTES = 1 << 30
"""Bytes a log file may hold on disk (compressed, for ``.eval``; a JSON log is read whole)."""
MAX_JSON_LOG_BYTES = 512 << 20
"""Bytes a ``.json`` log may hold (it is parsed whole)."""
MAX_TOTAL_BYTES = 2 << 30
"""Uncompressed bytes an ``.eval`` log's entries may declare together."""
MAX_ENTRY_BYTES = 1 << 30
"""Uncompressed bytes one entry may declare."""
MAX_ENTRIES = 1_000_000
"""Entries an ``.eval`` log may hold."""
MAX_SAMPLE_BYTES = 64 << 20
"""Uncompressed bytes one sample's entry (``samples/<id>_epoch_<n>.json``) may declare."""
MAX_COMPLETION_CHARS = 64 << 20
"""Characters one sample's completion may hold."""

_FIX = "counterfact reads logs up to these limits; re-run the eval with smaller outputs"


def _mib(n: int) -> str:
    return f"{n / (1 << 20):,.0f} MiB"


def _sample_name(entry: str) -> str:
    stem = entry.removeprefix("samples/").removesuffix(".json")
    sid, sep, epoch = stem.rpartition("_epoch_")
    return f"sample {sid!r} (epoch {epoch})" if sep else f"entry {entry!r}"


def _refuse(msg: str) -> ConfigError:
    return ConfigError(msg, field="LOG")


def check_log(path: Path) -> str:
    """Check ``path`` against the limits; return the digest of its bytes (16 hex digits).

    Raises:
        ConfigError: not a regular file, or past a limit (one line naming it).
    """
    is_json = path.suffix == ".json"
    limit = MAX_JSON_LOG_BYTES if is_json else MAX_LOG_BYTES
    try:
        data = read_regular(path, limit, follow=True)
    except OSError as exc:  # a FIFO, a device, a directory, too large, unreadable
        raise _refuse(f"{exc}; {_FIX}" if "allowed" in str(exc) else str(exc)) from None
    if not is_json:
        _check_entries(path, data)
    return hashlib.sha256(data).hexdigest()[:16]


def _check_entries(path: Path, data: bytes) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, ValueError, EOFError) as exc:
        msg = f"{path}: not an Inspect AI log (not a readable .eval zip: {exc})"
        raise _refuse(msg.splitlines()[0]) from None
    if len(entries) > MAX_ENTRIES:
        msg = f"{path}: the log holds {len(entries):,} entries, more than {MAX_ENTRIES:,}; {_FIX}"
        raise _refuse(msg)
    total = 0
    for entry in entries:
        size = entry.file_size
        total += size
        if entry.filename.startswith("samples/") and size > MAX_SAMPLE_BYTES:
            msg = (
                f"{path}: {_sample_name(entry.filename)} declares {size:,} bytes, more than the "
                f"{_mib(MAX_SAMPLE_BYTES)} a sample may hold; {_FIX}"
            )
            raise _refuse(msg)
        if size > MAX_ENTRY_BYTES:
            msg = (
                f"{path}: entry {entry.filename!r} declares {size:,} bytes, more than the "
                f"{_mib(MAX_ENTRY_BYTES)} an entry may hold (a zip bomb?); {_FIX}"
            )
            raise _refuse(msg)
    if total > MAX_TOTAL_BYTES:
        msg = (
            f"{path}: the log's entries declare {total:,} bytes uncompressed, more than the "
            f"{_mib(MAX_TOTAL_BYTES)} allowed (a zip bomb?); {_FIX}"
        )
        raise _refuse(msg)


def check_completion(path: Path, sample: str, epoch: int, completion: str) -> str:
    """``completion``, when it is within :data:`MAX_COMPLETION_CHARS`.

    Raises:
        ConfigError: it is longer (one line naming the sample).
    """
    if len(completion) > MAX_COMPLETION_CHARS:
        msg = (
            f"{path}: sample {sample!r} (epoch {epoch}) has a {len(completion):,}-character "
            f"completion, more than the {MAX_COMPLETION_CHARS:,} allowed; {_FIX}"
        )
        raise _refuse(msg)
    return completion
