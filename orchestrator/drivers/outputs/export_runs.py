"""``runs.<fmt>`` written in chunks: memory bounded by a chunk, not by the run log.

The table is the one :func:`~counterfact.orchestrator.drivers.outputs.export.load_runs` gives,
flattened as :func:`~counterfact.orchestrator.drivers.outputs.export.export` writes it, built in two
passes over ``runs.jsonl``. The first pass learns what the whole log decides for each column: which
columns exist (in order of first appearance, as ``pandas.json_normalize`` orders them), which
parents are dropped, each free column's type (``manifest.*``, ``cost.*``: inferred by pandas from
one example of each kind of value seen, and whether one was ever missing) and which become JSON
text. The second pass builds and writes one chunk of rows at a time under those decisions:
CSV appended row by row, Parquet a row group per chunk through one ``ParquetWriter``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from counterfact.orchestrator.drivers.outputs.columns import schema, typed
from counterfact.records.runs import RunRecord
from counterfact.records.verdicts import VerdictRecord

CHUNK = 20_000
"""Runs per chunk written."""

CSV_OPTIONS: dict[str, str] = {"lineterminator": "\r\n"}
"""RFC 4180 rows: CRLF line ends, so a cell holding a bare CR (or LF) is quoted and a
spreadsheet never starts a new row inside it (where the text after it, ``=cmd|...``, would land
unguarded in column A)."""


def flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``data`` with nested mappings as dotted keys, in ``pandas.json_normalize``'s order
    (a mapping's keys move to the end; an empty mapping leaves nothing).
    """
    out = dict(data) if not prefix else {f"{prefix}{k}": v for k, v in data.items()}
    for key, value in data.items():
        if isinstance(value, dict):
            name = f"{prefix}{key}"
            out.pop(name)
            out.update(flatten(value, f"{name}."))
    return out


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


@dataclass
class Plan:
    """What the whole log decides for each column (the first pass)."""

    rows: int = 0
    present: dict[str, int] = field(default_factory=dict)
    """Column -> rows holding a value that is not missing (insertion order: first seen)."""
    seen: dict[str, int] = field(default_factory=dict)
    """Column -> rows holding the key at all."""
    examples: dict[str, dict[type, Any]] = field(default_factory=dict)
    """Column -> one value of each kind seen."""

    def take(self, row: dict[str, Any]) -> None:
        """Count one flattened row."""
        self.rows += 1
        for key, value in row.items():
            self.seen[key] = self.seen.get(key, 0) + 1
            self.present.setdefault(key, 0)
            if not _missing(value):
                self.present[key] += 1
                self.examples.setdefault(key, {}).setdefault(type(value), value)

    def columns(self) -> list[str]:
        """The columns left once parents of dotted columns (and all-null parents of the record
        model's sub-records) are dropped.
        """
        names = list(self.present)
        parents = {c.rsplit(".", 1)[0] for c in names if "." in c}
        model = {c.rsplit(".", 1)[0] for c in schema(RunRecord) if "." in c}
        return [c for c in names if c not in parents and not (c in model and self.present[c] == 0)]

    def dtypes(self, pd: Any) -> dict[str, Any]:
        """Each free column's type, as pandas infers it over the whole log."""
        fixed = schema(RunRecord)
        out = {}
        for column in self.columns():
            if column in fixed:
                continue
            sample: list[dict[str, Any]] = [
                {column: v} for v in self.examples.get(column, {}).values()
            ]
            if self.seen[column] > self.present[column]:  # a null value
                sample.append({column: None})
            if self.seen[column] < self.rows:  # no key at all
                sample.append({})
            out[column] = pd.DataFrame(sample)[column].dtype if sample else np.dtype(object)
        return out

    def json_columns(self, dtypes: dict[str, Any]) -> set[str]:
        """Free columns written as JSON text: several kinds of value, or lists and mappings."""
        out = set()
        for column, dtype in dtypes.items():
            kinds = set(self.examples.get(column, {}))
            if dtype == np.dtype(object) and (len(kinds) > 1 or kinds & {list, dict}):
                out.add(column)
        return out


class Judged:
    """Each run's ``flipped`` and ``similarity`` as its verdict row judged it, in arrays per
    row (not a dict entry per run).
    """

    def __init__(self, rows: Iterable[VerdictRecord]) -> None:
        self._by: dict[tuple[str, str], tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]] = {}
        for row in rows:
            seeds, flipped = row.seed_list(), row.flipped_seed_list()
            if flipped is None or not seeds:
                continue
            size = max(seeds) + 1
            flips = np.full(size, -1, dtype=np.int8)
            sims = np.full(size, np.nan)
            flips[seeds] = 0
            flips[list(flipped)] = 1
            if row.similarities is not None:
                known = seeds[: len(row.similarities)]
                sims[known] = row.similarities[: len(known)]
            self._by[(row.scenario, row.arm)] = (flips, sims)

    def of(self, scenario: str, arm: str, seed: int) -> tuple[Any, float]:
        """(flipped or None, similarity or NaN) of one run."""
        found = self._by.get((scenario, arm))
        if found is None or not 0 <= seed < len(found[0]) or found[0][seed] < 0:
            return None, math.nan
        return bool(found[0][seed]), float(found[1][seed])


def chunks(records: Iterable[RunRecord]) -> Iterator[list[dict[str, Any]]]:
    """The flattened rows, :data:`CHUNK` at a time."""
    batch: list[dict[str, Any]] = []
    for record in records:
        batch.append(flatten(record.model_dump(mode="json", by_alias=True)))
        if len(batch) >= CHUNK:
            yield batch
            batch = []
    if batch:
        yield batch


def frame_of(
    pd: Any,
    rows: list[dict[str, Any]],
    plan: Plan,
    dtypes: dict[str, Any],
    judged: Judged,
    as_json: set[str],
) -> Any:
    """One chunk as the whole table's rows would be: the plan's columns and types, the
    judgement joined, JSON text where the whole log needs it.
    """
    columns = plan.columns()
    frame = pd.DataFrame(rows).reindex(columns=columns)
    for column, dtype in dtypes.items():
        if dtype == np.dtype(object):  # the values as written, not as this chunk would infer them
            frame[column] = pd.Series([r.get(column, np.nan) for r in rows], dtype=object)
        elif frame[column].dtype != dtype:
            frame[column] = frame[column].astype(dtype)
    frame = typed(pd, frame, RunRecord)
    keys = zip(frame["scenario"], frame["arm"], frame["seed"], strict=True)
    marks = [judged.of(s, a, int(n)) for s, a, n in keys]
    frame["flipped"] = pd.Series([pd.NA if f is None else f for f, _ in marks], dtype="boolean")
    frame["similarity"] = pd.Series([m for _, m in marks], dtype="Float64")
    for column in as_json:
        frame[column] = [None if _missing(v) else json.dumps(v) for v in frame[column]]
    return frame


def write_runs(
    pd: Any,
    records: Callable[[], Iterable[RunRecord]],
    verdicts: Iterable[VerdictRecord],
    path: Path,
    fmt: str,
    cell: Callable[[Any], Any],
) -> bool:
    """Write the runs table to ``path`` (``csv`` cells passed through ``cell``) from two reads
    of ``records``; False, writing nothing, when there is no run.
    """
    plan = Plan()
    for record in records():
        plan.take(flatten(record.model_dump(mode="json", by_alias=True)))
    if plan.rows == 0:
        return False
    dtypes = plan.dtypes(pd)
    as_json = plan.json_columns(dtypes)
    judged = Judged(verdicts)
    frames = (frame_of(pd, rows, plan, dtypes, judged, as_json) for rows in chunks(records()))
    if fmt == "csv":
        with path.open("w", encoding="utf-8", newline="") as fh:
            for i, frame in enumerate(frames):
                for column in frame.columns:
                    frame[column] = frame[column].map(cell)
                frame.to_csv(fh, index=False, header=i == 0, **CSV_OPTIONS)
        return True
    _parquet(pd, frames, path, plan, as_json)
    return True


def _parquet(pd: Any, frames: Iterable[Any], path: Path, plan: Plan, as_json: set[str]) -> None:
    """One row group per chunk, under the first chunk's schema with any column that chunk left
    all-null typed as the whole log types it.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer = None
    try:
        for frame in frames:
            if writer is None:
                found = pa.Schema.from_pandas(frame, preserve_index=False)
                for i, f in enumerate(found):
                    if pa.types.is_null(f.type):
                        kinds = set(plan.examples.get(f.name, {}))
                        kind = pa.bool_() if kinds == {bool} and f.name not in as_json else None
                        if f.name in as_json:  # text, typed as this pandas types text
                            text = pd.DataFrame({f.name: ["x"]})
                            kind = pa.Schema.from_pandas(text, preserve_index=False)[0].type
                        if kind is not None:
                            found = found.set(i, pa.field(f.name, kind))
                writer = pq.ParquetWriter(path, found)
                schema_of = found
            writer.write_table(pa.Table.from_pandas(frame, schema=schema_of, preserve_index=False))
    finally:
        if writer is not None:
            writer.close()
