r"""Records that can always be written: text a JSON encoder refuses is escaped, and a record that
still cannot be serialised becomes a failed run — never an exception in the store.

Python strings may hold lone surrogates (``"\udcff"``: a file name that was not UTF-8, decoded
with ``surrogateescape``). UTF-8 cannot encode them, so the JSON line cannot be written. Such text
is escaped with ``backslashreplace`` (the surrogate becomes the six characters ``\udcff``) and
the record is flagged ``text_escaped``; the run is judged on the escaped text.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from counterfact.records.runs import RunError, RunRecord

_UNWRITABLE = (PydanticSerializationError, ValidationError, ValueError, RecursionError, TypeError)


def escape_text(value: str) -> str:
    """``value`` with every code point UTF-8 cannot encode written as a backslash escape."""
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def _escaped(node: Any) -> Any:
    if isinstance(node, str):
        return escape_text(node)
    if isinstance(node, dict):
        return {_escaped(k): _escaped(v) for k, v in node.items()}
    if isinstance(node, list | tuple):
        return [_escaped(v) for v in node]
    return node


def record_line(record: RunRecord) -> tuple[RunRecord, str]:
    """The record to keep and its JSON line: as is; else with its text escaped (flagged); else,
    when even that cannot be written, a failed run that says why.
    """
    try:
        return record, record.model_dump_json()
    except _UNWRITABLE:
        pass
    try:
        data = _escaped(record.model_dump(mode="python"))
        escaped = RunRecord.model_validate(data | {"text_escaped": True})
        return escaped, escaped.model_dump_json()
    except _UNWRITABLE as exc:
        failed = unwritable(record, exc)
        return failed, failed.model_dump_json()


def unwritable(record: RunRecord, exc: BaseException) -> RunRecord:
    """The run recorded as failed: its result could not be written as a record."""
    reason = escape_text(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)[:300]
    error = RunError(
        type="RunnerReturnError",
        message=(
            f"the run's result cannot be written as a record ({type(exc).__name__}: {reason}); "
            "return text, finite numbers and plain JSON data"
        ),
    )
    return RunRecord(
        scenario=escape_text(record.scenario),
        arm=escape_text(record.arm),
        seed=record.seed,
        runner_seed=record.runner_seed,
        output=None,
        manifest=None,
        cost=None,
        error=error,
        duration_s=record.duration_s,
        finished_at=record.finished_at,
        attempts=record.attempts,
        node=record.node,
    )
