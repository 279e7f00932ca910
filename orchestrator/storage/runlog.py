"""``runs.jsonl``: one run record per line; reading it back tolerates a torn last line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from counterfact.exceptions import RunDirectoryError
from counterfact.probes.records import RunRecord

RUNS_FILE = "runs.jsonl"


@dataclass(frozen=True)
class Existing:
    """What a run log already holds."""

    records: tuple[RunRecord, ...]
    torn: bool
    """The last line was cut off by a crash (it is dropped)."""
    good_bytes: int
    """Length of the file up to the last complete line."""


def read_runs(path: Path) -> Existing:
    """Read ``runs.jsonl``; tolerate a torn last line, refuse corruption anywhere else.

    Raises:
        RunDirectoryError: a line other than the last is not a run record.
    """
    if not path.exists():
        return Existing((), False, 0)
    data = path.read_bytes()
    lines = data.split(b"\n")
    records: list[RunRecord] = []
    offset = 0
    for number, line in enumerate(lines, 1):
        is_last = number == len(lines)
        if not line.strip():
            offset += len(line) + (0 if is_last else 1)
            continue
        try:
            records.append(RunRecord.model_validate_json(line))
        except ValidationError as exc:
            # Torn: only the final piece, written without its newline. A bad line that ends in
            # a newline was written whole, so it is corruption, wherever it stands.
            if is_last:
                return Existing(tuple(records), True, offset)
            msg = (
                f"{path} line {number} is not a run record ({exc.errors()[0]['msg']}); the file "
                "is corrupt beyond a torn last line — inspect it, or pass --fresh to start anew "
                "(the old directory is moved aside, not deleted)"
            )
            raise RunDirectoryError(msg) from exc
        if is_last:  # complete record but no newline: keep it, the append adds one first
            return Existing(tuple(records), False, len(data))
        offset += len(line) + 1
    return Existing(tuple(records), False, offset)
