"""Size limits on an Inspect AI log, checked before Inspect reads it (issue 27 item 8).

An ``.eval`` log is a zip: a 4 MB zip bomb reached 4.4 GB before failing, and a 100 MB
completion took 3.5 GB to read. :func:`check_log` reads the file with a bounded reader (a
regular file of at most :data:`MAX_LOG_BYTES`), then checks the entries' *declared* sizes and
their count before anything is decompressed: Inspect reads a local ``.eval`` with the standard
library's ``zipfile``, whose member streams stop at the declared size, so the declared sizes
bound what is decompressed. :func:`check_completion` bounds each completion once read (a JSON
log has no entries to check). Each limit is a module constant; a log past one is a one-line
``ConfigError`` naming the log (and the sample).

Declared sizes are not trusted (issue 45 item 2): Inspect reads a local ``.eval`` with its own
zip reader, which inflates an entry's compressed bytes whole whatever the entry declares, so a
96 KB log declaring small entries was still being read after 15 minutes at 2.5 GB. After the
declared sizes, :func:`check_log` therefore inflates every entry itself, in 1 MiB pieces, the way
Inspect will (the compressed bytes the central directory points at; stored, deflate or zstd),
and stops at the first piece past a limit on the bytes actually produced: per entry, per log,
and per compressed byte (:data:`MAX_RATIO`, once an entry passes :data:`RATIO_FLOOR`). An entry
that inflates to another size than it declares is refused too (a forged header), so what Inspect
reads next is what was measured. The cost is one pass of inflating, at most
:data:`MAX_TOTAL_BYTES`.
"""

from __future__ import annotations

import hashlib
import io
import struct
import zipfile
import zlib
from collections.abc import Iterator
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
MAX_RATIO = 1_000
"""Uncompressed bytes an entry may produce per compressed byte (deflate's best is about 1,030;
Inspect's logs compress some 10 to 50 times), checked once past :data:`RATIO_FLOOR`."""
RATIO_FLOOR = 1 << 20
"""Bytes an entry may produce before :data:`MAX_RATIO` applies (a small entry may compress well)."""
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
    _inflate_entries(path, data, entries)


_PIECE = 1 << 20
"""Bytes of output one decompression step may produce (the memory one entry's check holds)."""
_FEED = 64 << 10
"""Compressed bytes given to deflate at a time (its unconsumed tail is copied each step)."""
_ZSTD = 93
"""The zip method number for zstd (Inspect writes its logs with it)."""


def _payload(path: Path, data: bytes, entry: zipfile.ZipInfo) -> memoryview:
    """The compressed bytes of ``entry``: after its local header, as long as the central
    directory says (where Inspect's reader takes them from).
    """
    start = entry.header_offset
    header = data[start : start + 30]
    if len(header) < 30 or header[:4] != b"PK\x03\x04":
        msg = f"{path}: not an Inspect AI log (entry {entry.filename!r} has no local header)"
        raise _refuse(msg)
    name_len, extra_len = struct.unpack_from("<HH", header, 26)
    begin = start + 30 + name_len + extra_len
    end = begin + entry.compress_size
    if end > len(data):
        msg = f"{path}: not an Inspect AI log (entry {entry.filename!r} runs past the file's end)"
        raise _refuse(msg)
    return memoryview(data)[begin:end]


def _inflate(method: int, payload: memoryview) -> Iterator[bytes]:
    """``payload`` decompressed, in pieces of at most :data:`_PIECE` bytes."""
    if method == zipfile.ZIP_STORED:
        for at in range(0, len(payload), _PIECE):
            yield bytes(payload[at : at + _PIECE])
    elif method == zipfile.ZIP_DEFLATED:
        inflater = zlib.decompressobj(-15)
        for at in range(0, len(payload), _FEED):
            pending = bytes(payload[at : at + _FEED])
            while not inflater.eof:  # a full piece may leave output inside zlib: drain it
                piece = inflater.decompress(pending, _PIECE)
                pending = inflater.unconsumed_tail
                yield piece
                if not pending and len(piece) < _PIECE:
                    break
    elif method == _ZSTD:
        import zstandard  # Inspect's own dependency: present wherever Inspect reads the log

        reader = zstandard.ZstdDecompressor().stream_reader(payload, read_across_frames=True)
        while piece := reader.read(_PIECE):
            yield piece
    else:
        msg = f"compression method {method}, which Inspect AI does not read"
        raise ValueError(msg)


def _entry_cap(entry: zipfile.ZipInfo) -> tuple[int, str]:
    if entry.filename.startswith("samples/"):
        return MAX_SAMPLE_BYTES, "a sample may hold"
    return MAX_ENTRY_BYTES, "an entry may hold"


def _inflate_entries(path: Path, data: bytes, entries: list[zipfile.ZipInfo]) -> None:
    """Inflate every entry, counting what it produces, to the first limit it passes.

    Raises:
        ConfigError: an entry past a limit, or inflating to another size than it declares.
    """
    total = 0
    for entry in entries:
        cap, holds = _entry_cap(entry)
        produced = 0
        try:
            for piece in _inflate(entry.compress_type, _payload(path, data, entry)):
                produced += len(piece)
                total += len(piece)
                _check_produced(path, entry, produced, total, cap, holds)
        except ConfigError:
            raise
        except Exception as exc:  # zlib.error, zstandard.ZstdError, an unknown method
            what = f"entry {entry.filename!r} cannot be decompressed ({exc})"
            raise _refuse(f"{path}: not an Inspect AI log ({what})".splitlines()[0]) from None
        if produced != entry.file_size:
            msg = (
                f"{path}: entry {entry.filename!r} declares {entry.file_size:,} bytes but "
                f"inflates to {produced:,} (a forged header); {_FIX}"
            )
            raise _refuse(msg)


def _check_produced(
    path: Path, entry: zipfile.ZipInfo, produced: int, total: int, cap: int, holds: str
) -> None:
    name = _sample_name(entry.filename)
    lied = f" (it declares {entry.file_size:,}: a zip bomb?)" if produced > entry.file_size else ""
    if produced > cap:
        msg = (
            f"{path}: {name} inflates to more than the {_mib(cap)} {holds}{lied}; stopped "
            f"there; {_FIX}"
        )
        raise _refuse(msg)
    if produced > RATIO_FLOOR and produced > MAX_RATIO * max(entry.compress_size, 1):
        msg = (
            f"{path}: {name} inflates to more than {MAX_RATIO:,} times its "
            f"{entry.compress_size:,} compressed bytes{lied}; stopped at {produced:,}; {_FIX}"
        )
        raise _refuse(msg)
    if total > MAX_TOTAL_BYTES:
        msg = (
            f"{path}: the log's entries inflate to more than the {_mib(MAX_TOTAL_BYTES)} "
            f"allowed together{lied}; stopped in {name}; {_FIX}"
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
