"""Records for other tools: pandas DataFrames, and Parquet or CSV files beside the records.

One row per record line (``runs.jsonl``, ``verdicts.jsonl``), nested fields flattened into
dotted column names (``error.type``, ``test.p_value``). In the written files, values that are
still lists or mappings (seed lists, ``facets_diff`` entries) are JSON text, so every column
has one type; the DataFrames keep them as Python objects. Needs the ``data`` extra (pandas and
pyarrow): ``pip install 'counterfact[data]'``. Files are written to a temporary name and
renamed, so nothing is ever half-written.
"""

from __future__ import annotations

import json
import math
import os
import secrets
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from counterfact.exceptions import ConfigError, ExecutorError
from counterfact.orchestrator.drivers.outputs.columns import typed
from counterfact.orchestrator.drivers.outputs.export_runs import CSV_OPTIONS, write_runs
from counterfact.orchestrator.storage.recordfiles import (
    bisect_of,
    require_records,
    runs_of,
    summary_of,
    verdicts_of,
)
from counterfact.records.arms import ArmVerdictRecord
from counterfact.records.bisect import BisectProbeRecord
from counterfact.records.paths import RunPaths
from counterfact.records.runs import RunRecord
from counterfact.records.verdicts import VerdictRecord

FORMATS = ("parquet", "csv")
EXTRA = "pip install 'counterfact[data]'"


def _pandas() -> Any:
    try:
        import pandas as pd
    except ImportError as exc:
        msg = f"this needs pandas, from the data extra: {EXTRA}"
        raise ConfigError(msg) from exc
    return pd


def records_frame(
    records: Iterable[BaseModel], owner: str, model: type[BaseModel] | None = None
) -> Any:
    """``owner``'s ``to_frame()``: :func:`dotted` over ``records``.

    Raises:
        ImportError: pandas is not installed (the message names ``owner`` and the extra).
    """
    try:
        import pandas as pd
    except ImportError as exc:
        msg = f"{owner}.to_frame needs pandas: pip install 'counterfact[data]'"
        raise ImportError(msg) from exc
    frame = dotted(pd, records)
    return typed(pd, frame, model) if model is not None else frame


def dotted(pd: Any, records: Iterable[BaseModel]) -> Any:
    """Records as a DataFrame, nested fields flattened into dotted columns (a parent column
    left only where every row had null for it is dropped).
    """
    rows = [r.model_dump(mode="json", by_alias=True) for r in records]
    frame = pd.json_normalize(rows, sep=".") if rows else pd.DataFrame()
    parents = {c.rsplit(".", 1)[0] for c in frame.columns if "." in c}
    return frame.drop(columns=[c for c in frame.columns if c in parents])


def _load(
    run_dir: str | Path, read: Callable[[Path], Iterable[BaseModel]], model: type[BaseModel]
) -> Any:
    pd = _pandas()
    folder = Path(run_dir)
    require_records(folder)
    return typed(pd, dotted(pd, read(folder)), model)


def load_runs(run_dir: str | Path) -> Any:
    """``runs.jsonl`` as a pandas DataFrame: one row per run, nested fields as dotted columns
    (a torn last line is dropped, as on resume), each of its record field's type whatever the
    data (``error.type`` is a string column even when no run failed). Two columns join the
    verdicts: ``flipped`` and ``similarity``, the run as its row judged it (null where no row
    judged it: a failed run, no reference, a bisection's probes).

    Raises:
        RunDirectoryError: no records there, or a damaged line.
        ConfigError: pandas is not installed (the ``data`` extra).
    """
    pd = _pandas()
    frame = _load(run_dir, runs_of, RunRecord)
    return judged(pd, frame, verdicts_of(Path(run_dir)))


def load_verdicts(run_dir: str | Path) -> Any:
    """``verdicts.jsonl`` as a pandas DataFrame: one row per (scenario, arm).

    Raises:
        RunDirectoryError: no records there, or a damaged line.
        ConfigError: pandas is not installed (the ``data`` extra).
    """
    return _load(run_dir, verdicts_of, VerdictRecord)


def load_arms(run_dir: str | Path) -> Any:
    """The arm-level verdicts (``summary.json`` ``arms``, the lines of ``arms.jsonl``) as a
    DataFrame: one row per challenger, nested fields flattened; empty without them.

    Raises:
        RunDirectoryError: no records there, or a damaged file.
        ConfigError: pandas is not installed (the ``data`` extra).
    """

    def arms(folder: Path) -> list[ArmVerdictRecord]:
        summary = summary_of(folder)
        return list(summary.arms) if summary is not None else []

    return _load(run_dir, arms, ArmVerdictRecord)


def load_probes(run_dir: str | Path) -> Any:
    """A bisection's probes (``bisect.json`` ``probes``) as a DataFrame, one row per probe use in
    order (``ablated`` a list of ids); empty for a sweep.

    Raises:
        RunDirectoryError: no records there, or a damaged file.
        ConfigError: pandas is not installed (the ``data`` extra).
    """
    pd = _pandas()
    folder = Path(run_dir)
    require_records(folder)
    record = bisect_of(folder)
    probes = record.probes if record is not None else []
    frame = typed(pd, dotted(pd, probes), BisectProbeRecord)
    frame.insert(0, "probe", pd.Series(range(1, len(frame) + 1), dtype="Int64"))
    return frame


def judged(pd: Any, frame: Any, rows: Iterable[VerdictRecord]) -> Any:
    """``frame`` (runs) with ``flipped`` and ``similarity`` as each run's row judged it."""
    flips: dict[tuple[str, str, int], bool] = {}
    sims: dict[tuple[str, str, int], float] = {}
    for row in rows:
        seeds = row.seed_list()
        flipped = row.flipped_seed_list()
        if flipped is None:
            continue
        hit = set(flipped)
        for i, seed in enumerate(seeds):
            flips[(row.scenario, row.arm, seed)] = seed in hit
            if row.similarities is not None and i < len(row.similarities):
                sims[(row.scenario, row.arm, seed)] = row.similarities[i]
    keys = (
        list(zip(frame["scenario"], frame["arm"], frame["seed"], strict=True)) if len(frame) else []
    )
    out = frame.copy()
    out["flipped"] = pd.Series(
        [flips.get(k, pd.NA) for k in keys], dtype="boolean", index=out.index
    )
    out["similarity"] = pd.Series(
        [sims.get(k, pd.NA) for k in keys], dtype="Float64", index=out.index
    )
    return out


def _missing(value: Any) -> bool:
    """None, or the NaN pandas fills absent keys with (lists and mappings are never missing)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _flat(frame: Any) -> Any:
    """One type per column, for Parquet and CSV: a column holding lists, mappings or values of
    several types (``0.7`` in one arm, ``"default"`` in another) becomes JSON text.
    """
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype != object:
            continue
        kinds = {type(v) for v in out[column] if not _missing(v)}
        if len(kinds) > 1 or kinds & {list, dict}:
            out[column] = [None if _missing(v) else json.dumps(v) for v in out[column]]
    return out


def export(run_dir: str | Path, fmt: str = "parquet") -> list[Path]:
    """Write ``runs.<fmt>``, ``verdicts.<fmt>`` and ``arms.<fmt>`` (a bisection: ``probes.<fmt>``)
    into ``run_dir``; the paths written.

    Raises:
        RunDirectoryError: no records there, or a damaged line.
        ConfigError: an unknown format, or the ``data`` extra is missing.
    """
    if fmt not in FORMATS:
        msg = f"unknown export format {fmt!r}; known: {', '.join(FORMATS)}"
        raise ConfigError(msg, field="--format")
    folder = Path(run_dir)
    pd = _pandas()
    require_records(folder)
    written = []
    path = RunPaths(folder).export("runs", fmt)
    # the run log is streamed twice, a chunk at a time: memory does not grow with the runs
    if _replace(path, lambda tmp: _write_runs(pd, folder, tmp, fmt)):
        written.append(path)
    tables = (
        ("verdicts", load_verdicts(folder)),
        ("arms", load_arms(folder)),
        ("probes", load_probes(folder)),
    )
    for name, frame in tables:
        if frame.empty:
            continue
        path = RunPaths(folder).export(name, fmt)
        _replace(path, partial(_write_table, _flat(frame), fmt=fmt))
        written.append(path)
    return written


def _replace(path: Path, write: Callable[[Path], bool]) -> bool:
    """``write`` to a temporary name, renamed to ``path`` when it wrote something."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        wrote = write(tmp)
        if wrote:
            os.replace(tmp, path)
        return wrote
    finally:
        tmp.unlink(missing_ok=True)


def _write_table(frame: Any, tmp: Path, *, fmt: str) -> bool:
    _write(frame, tmp, fmt)
    return True


def _write_runs(pd: Any, folder: Path, tmp: Path, fmt: str) -> bool:
    try:
        return write_runs(pd, lambda: runs_of(folder), verdicts_of(folder), tmp, fmt, _as_text)
    except ImportError as exc:
        msg = f"Parquet needs pyarrow, from the data extra: {EXTRA} (or use --format csv)"
        raise ConfigError(msg) from exc
    except (OSError, ValueError, TypeError) as exc:  # pyarrow's own errors: one line
        msg = f"could not write {tmp.name}: {type(exc).__name__}: {str(exc)[:200]}"
        raise ExecutorError(msg) from exc


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""A CSV cell starting with one of these is read as a formula by spreadsheets (CSV injection)."""


def _as_text(value: Any) -> Any:
    """A cell a spreadsheet would run as a formula, kept as text: a leading ``'``."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def _write(frame: Any, path: Path, fmt: str) -> None:
    if fmt == "csv":  # an LLM's output may be '=HYPERLINK(...)': never a live formula
        safe = frame.copy()
        for column in safe.columns:  # text may sit in object or string columns: map them all
            safe[column] = safe[column].map(_as_text)
        safe.to_csv(path, index=False, **CSV_OPTIONS)
        return
    try:
        frame.to_parquet(path, index=False)
    except ImportError as exc:
        msg = f"Parquet needs pyarrow, from the data extra: {EXTRA} (or use --format csv)"
        raise ConfigError(msg) from exc
    except Exception as exc:  # pyarrow's own errors: one line, not a traceback
        msg = f"could not write {path.name}: {type(exc).__name__}: {str(exc)[:200]}"
        raise ExecutorError(msg) from exc
