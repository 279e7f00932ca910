"""Put a calibration script's section into a Markdown file between its two marker comments (in
place of its old self, else at the end), shared by the ``calibrate*.py`` scripts."""

from __future__ import annotations

from pathlib import Path


def replace_section(path: Path, start: str, end: str, section: str) -> None:
    """Write ``section`` (which begins with ``start`` and ends with ``end``) into ``path``."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if start in old and end in old:
        text = old[: old.index(start)] + section + old[old.index(end) + len(end) :]
    else:
        text = old.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text, encoding="utf-8")
