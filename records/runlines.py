"""Decoding one ``runs.jsonl`` line, fast: what every reader of run records parses with.

A sweep of 125,000 seeds reads 250,000 lines twice in the driver: each worker's line once for
the tallies, and the whole file again for ``report.html``. ``RunRecord.model_validate_json``
costs about 15 µs a line there, most of it because the record's ``before`` validator makes
pydantic build the Python object of the JSON before validating it. Two faster paths, each with
the same outcome as the model:

- :func:`parse_run`: the line decoded by pydantic's JSON parser, then validated as Python
  (about 9 µs against 15 on a quiet machine): the same :class:`RunRecord`.
- :func:`brief_of`: the line decoded by that parser and, when it is usual (the keys this version
  writes, in its order, each value of a type the model keeps as it is: one set lookup), kept as a
  :class:`RunBrief` of the few fields the report reads (about 3 µs: no model is built).

Either falls back to ``RunRecord.model_validate_json`` on anything else (a line that is not JSON,
a failed run, an older schema, a number written as a string), so a damaged line fails with the
model's own error and an unusual valid one reads as the model reads it. A test compares the
paths with the model on usual and odd lines.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from pydantic_core import from_json

from counterfact.records.runs import MAX_RUN_COST, RunError, RunRecord


def parse_run(line: bytes | str) -> RunRecord:
    """The run record of one ``runs.jsonl`` line, as ``RunRecord.model_validate_json`` gives.

    Raises:
        ValidationError: the line is not a run record (the model's own error for the line).
    """
    try:
        return RunRecord.model_validate(from_json(line))
    except ValueError:  # not JSON, or not a record: the model says what, in its JSON terms
        return RunRecord.model_validate_json(line)


_KEYS = (
    "schema_version",
    "scenario",
    "arm",
    "seed",
    "runner_seed",
    "output",
    "manifest",
    "cost",
    "error",
    "duration_s",
    "finished_at",
    "attempts",
    "from_cache",
    "infra_retries",
    "infra_error",
    "rate_limited",
    "rate_limited_s",
    "text_escaped",
    "node",
)
"""The keys of a line as this version writes it, in its order (``cost_refused`` is written only
when it holds something)."""

_NONE = type(None)
_TYPES: dict[str, tuple[type, ...]] = {
    "schema_version": (int,),
    "scenario": (str,),
    "arm": (str,),
    "seed": (int,),
    "runner_seed": (int, _NONE),
    "output": (str, _NONE),
    "manifest": (dict, _NONE),
    "cost": (dict, _NONE),
    "error": (_NONE,),  # a failed run's error is left to the model (rare)
    "duration_s": (float,),
    "finished_at": (str,),
    "attempts": (int,),
    "from_cache": (bool,),
    "infra_retries": (int,),
    "infra_error": (str, _NONE),
    "rate_limited": (int,),
    "rate_limited_s": (float,),
    "text_escaped": (bool,),
    "node": (str, _NONE),
}
"""The JSON types each field of a usual line holds, each one the model takes as it is (an int
is never a bool here: ``type`` is compared, not ``isinstance``)."""

_SHAPES = frozenset(itertools.product(*(_TYPES[k] for k in _KEYS)))
"""Every usual line's field types, in key order: one set lookup checks a whole line."""


def _usual(data: object) -> dict[str, Any] | None:
    """``data`` when it is a line as this version writes it, with every field of a type the model
    keeps as it is and no cost it would move aside; else None (the model decides).
    """
    if type(data) is not dict or tuple(data) != _KEYS:
        return None
    if tuple(map(type, data.values())) not in _SHAPES or data["schema_version"] != 6:
        return None
    cost = data["cost"]
    if cost is not None and not all(
        type(v) is float and 0.0 <= v <= MAX_RUN_COST for v in cost.values()
    ):
        return None
    return data


@dataclass(frozen=True, slots=True)
class RunBrief:
    """What ``report.html`` reads of a run record (the same names as on :class:`RunRecord`)."""

    scenario: str
    arm: str
    seed: int
    output: str | None
    manifest: dict[str, Any] | None
    error: RunError | None


def brief_of(line: bytes | str) -> RunBrief:
    """The report's fields of one ``runs.jsonl`` line: read straight from the JSON when the line
    is usual (:func:`_usual`), else from the model, which refuses a line that is no record.

    Raises:
        ValidationError: the line is not a run record (the model's own error for the line).
    """
    try:
        data = _usual(from_json(line))
    except ValueError:
        data = None
    if data is None:
        return brief(RunRecord.model_validate_json(line))
    return RunBrief(
        data["scenario"], data["arm"], data["seed"], data["output"], data["manifest"], None
    )


def brief(record: RunRecord) -> RunBrief:
    """The report's fields of a record already validated."""
    return RunBrief(
        record.scenario, record.arm, record.seed, record.output, record.manifest, record.error
    )
