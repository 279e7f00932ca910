"""``runner_files``: the data files a runner reads, hashed into its identity.

The runner's identity (resume, run cache) is its ``runner_version`` or a hash of its module
source. A RAG corpus, a prompt template or a few-shot file is read at run time and changes what
the runner answers without touching its source; listing it in ``runner_files`` (paths or globs,
relative to the sweep file) makes an edited file a changed runner: the resume is refused naming
the file, and the run cache does not serve runs made with the old one.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from counterfact.exceptions import ConfigError

MAX_FILES = 10_000
"""Files ``runner_files`` may cover (each is read in full once per resolve)."""


def _digest(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()[:16]


def _matches(base_dir: Path, pattern: str) -> list[Path]:
    if any(ch in pattern for ch in "*?["):
        return sorted(p for p in base_dir.glob(pattern) if p.is_file())
    path = base_dir / pattern
    return [path] if path.is_file() else []


def runner_files(patterns: Sequence[str], base_dir: Path) -> tuple[tuple[str, str], ...]:
    """``(path relative to the sweep file's folder, sha256 prefix)`` per file, sorted by path.

    Raises:
        ConfigError: a pattern matches no file, or the files are more than :data:`MAX_FILES`.
    """
    found: dict[str, str] = {}
    for i, pattern in enumerate(patterns):
        paths = _matches(base_dir, pattern)
        if not paths:
            msg = (
                f"{pattern!r} matches no file under {base_dir} (paths and globs are relative to "
                "the sweep file); fix the path or remove it"
            )
            raise ConfigError(msg, field=f"runner_files[{i}]")
        for path in paths:
            name = Path(os.path.relpath(path.resolve(), base_dir.resolve())).as_posix()
            found[name] = _digest(path)
        if len(found) > MAX_FILES:
            msg = (
                f"runner_files covers more than {MAX_FILES:,} files; list the ones the runner reads"
            )
            raise ConfigError(msg, field=f"runner_files[{i}]")
    return tuple(sorted(found.items()))


def files_digest(files: Sequence[tuple[str, str]]) -> str:
    """One digest over every (path, file digest), for the runner's identity."""
    joined = "\n".join(f"{name}\0{digest}" for name, digest in files)
    return hashlib.sha256(joined.encode()).hexdigest()[:16]
