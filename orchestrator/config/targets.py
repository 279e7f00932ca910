"""Parse the target strings a config names (``runner``, ``comparator.target`` ...)."""

from __future__ import annotations

from pathlib import Path

from counterfact.exceptions import RunnerImportError
from counterfact.orchestrator.engine.loading.loader import TargetRef


def parse_target(spec: str, *, base_dir: Path, field: str) -> TargetRef:
    """Parse ``spec``; a file target is made absolute against ``base_dir``.

    Raises:
        RunnerImportError: the spec has no ``:attr`` part.
    """
    location, sep, attr = spec.rpartition(":")
    if not sep or not location.strip() or not attr.strip():
        msg = (
            f"{spec!r} is not a target; write 'package.module:callable' or "
            "'path/to/file.py:callable'"
        )
        raise RunnerImportError(msg, field=field)
    if location.endswith(".py") or "/" in location or "\\" in location:
        path = Path(location)
        if not path.is_absolute():
            path = base_dir / path
        return TargetRef("file", str(path.resolve()), attr)
    return TargetRef("module", location, attr)
