"""``scenarios: {file: PATH}``: an eval set read from JSONL, CSV, Parquet or YAML.

Each format gives a list of scenario objects (``id``, ``inputs``, ``reference``, ``expect``):

- **JSONL**: one JSON object a line, ``{"id": ..., "inputs": {...}, "reference": ...}``, with
  the question's own check, if any, as ``"expect": {"kind": "numeric", "tolerance": 0.01}``;
- **CSV** / **Parquet**: one row a scenario: column ``id``, optional ``reference`` and
  ``expect``, every other column an input (CSV values are text; Parquet keeps its types). An
  ``expect`` cell holds a kind name (``contains``), a JSON object (``{"kind": "one-of",
  "options": ["yes", "no"]}``) or nothing (the sweep's comparator judges that question);
- **YAML**: a list of the same objects as ``scenarios:`` inline.

Errors name the file and the line (JSONL, YAML: the item) or row (CSV, Parquet, counted from 1
after the header). ``limit`` keeps the first N; ``sample: {n, seed}`` a seeded random subset in
file order. Nothing here runs anything: the file is read when the sweep is resolved. The file is
data: an ``expect`` may pick a check the sweep file declares (``checks:``) by name, and one that
names a callable is refused (:mod:`counterfact.orchestrator.config.trust`).
"""

from __future__ import annotations

import csv
import json
import math
import random
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from counterfact.defaults import MAX_CONFIG_DEPTH
from counterfact.exceptions import ConfigError
from counterfact.orchestrator.config.errors import clean_loc, field_path
from counterfact.orchestrator.config.schema import ScenarioConfig, ScenarioFileConfig
from counterfact.orchestrator.config.trust import data_check
from counterfact.orchestrator.config.yamlload import load_yaml, yaml_problem

FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet"}
FORMATS |= {".yaml": "yaml", ".yml": "yaml"}
FIELD = "scenarios.file"


TOO_DEEP = f"nests deeper than {MAX_CONFIG_DEPTH} levels; flatten the scenario's inputs"


def _fail(path: Path, where: str, problem: str) -> ConfigError:
    return ConfigError(f"{path}: {where}: {problem}", field=FIELD)


def _too_deep(value: Any, limit: int = MAX_CONFIG_DEPTH) -> bool:
    """True when ``value`` holds lists or mappings more than ``limit`` levels deep (iterative:
    a deep value cannot overflow the stack here).
    """
    level = [value] if isinstance(value, (dict, list)) else []
    for _ in range(limit):  # level: the containers one level deeper each time, level by level
        deeper: list[Any] = []
        for item in level:
            children = item.values() if isinstance(item, dict) else item
            deeper += [c for c in children if isinstance(c, (dict, list))]
        if not deeper:
            return False
        level = deeper
    return True


def _jsonl(path: Path, text: str) -> Iterator[tuple[str, Any]]:
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield f"line {number}", json.loads(line)
        except json.JSONDecodeError as exc:
            raise _fail(path, f"line {number}", f"not JSON ({exc.msg})") from exc
        except RecursionError as exc:
            raise _fail(path, f"line {number}", TOO_DEEP) from exc


def _table_row(row: dict[str, Any]) -> dict[str, Any]:
    """A CSV or Parquet row as a scenario object: ``id``, ``reference``, the rest inputs."""
    found = dict(row)
    out: dict[str, Any] = {"id": found.pop("id", None)}
    if "reference" in found:
        ref = found.pop("reference")
        typed = isinstance(ref, (int, float)) and not isinstance(ref, bool)
        if typed and math.isfinite(ref):
            ref = str(ref)  # a typed numeric column (Parquet): its numbers are the answers
        out["reference"] = None if ref is None or ref == "" else ref
    if "expect" in found:
        check = found.pop("expect")
        out["expect"] = None if check is None or check == "" else check
    out["inputs"] = found
    return out


def _expect_cell(path: Path, where: str, item: dict[str, Any]) -> dict[str, Any]:
    """``item`` with an ``expect`` written as JSON text (a table cell) read as its object."""
    check = item.get("expect")
    if not isinstance(check, str) or not check.lstrip().startswith("{"):
        return item
    try:
        found = json.loads(check)
    except json.JSONDecodeError as exc:
        msg = (
            f"expect: {check!r:.80} is not a JSON object ({exc.msg}); write a kind name "
            '(contains) or an object such as {"kind": "numeric", "tolerance": 0.01}'
        )
        raise _fail(path, where, msg) from exc
    return item | {"expect": found}


def _csv(path: Path, text: str) -> Iterator[tuple[str, Any]]:
    reader = csv.DictReader(text.splitlines())
    if reader.fieldnames is None or "id" not in reader.fieldnames:
        raise _fail(path, "header", f"needs an 'id' column, has {reader.fieldnames or []}")
    for number, row in enumerate(reader, 1):
        if None in row:
            raise _fail(path, f"row {number}", "has more cells than the header")
        yield f"row {number}", _table_row(row)


def _parquet(path: Path) -> Iterator[tuple[str, Any]]:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        msg = "reading Parquet needs pyarrow: pip install 'counterfact[data]'"
        raise ConfigError(msg, field=FIELD) from exc
    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow's errors are many: one line says which file
        raise _fail(path, "file", f"not a Parquet file ({type(exc).__name__}: {exc})") from exc
    if "id" not in table.column_names:
        raise _fail(path, "columns", f"needs an 'id' column, has {table.column_names}")
    for number, row in enumerate(table.to_pylist(), 1):
        yield f"row {number}", _table_row(row)


def _yaml(path: Path, text: str) -> Iterator[tuple[str, Any]]:
    try:
        data = load_yaml(text, plain=True)
    except RecursionError as exc:
        raise _fail(path, "file", TOO_DEEP) from exc
    except yaml.YAMLError as exc:
        raise _fail(path, "file", f"not valid YAML: {yaml_problem(exc)}") from exc
    except Exception as exc:  # a tag's constructor (!!int x): its words, on one line
        problem = " ".join(str(exc).split())[:200]
        raise _fail(path, "file", f"not valid YAML ({problem})") from exc
    if not isinstance(data, list):
        raise _fail(path, "file", f"must hold a list of scenarios, got {type(data).__name__}")
    for number, item in enumerate(data, 1):
        yield f"item {number}", item


def _items(path: Path, kind: str) -> Iterator[tuple[str, Any]]:
    if kind == "parquet":
        yield from _parquet(path)
        return
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise _fail(path, "file", "is not UTF-8 text") from exc
    yield from {"jsonl": _jsonl, "csv": _csv, "yaml": _yaml}[kind](path, text)


def _scenario(path: Path, where: str, item: Any, checks: Mapping[str, object]) -> ScenarioConfig:
    if not isinstance(item, dict):
        raise _fail(path, where, f"must be an object with 'id', got {type(item).__name__}")
    if _too_deep(item):
        raise _fail(path, where, TOO_DEEP)
    if isinstance(item.get("id"), int) and not isinstance(item.get("id"), bool):
        item = item | {"id": str(item["id"])}  # numeric ids in a table column
    reference = item.get("reference")
    if isinstance(reference, bool):
        msg = f"reference: {reference} is a boolean; write the reference as text ('{reference}')"
        raise _fail(path, where, msg)
    if isinstance(reference, float) and not math.isfinite(reference):
        msg = (
            f"reference: {reference} is not an answer (a missing value?); leave the cell empty "
            "(or null) for no reference"
        )
        raise _fail(path, where, msg)
    if isinstance(reference, (int, float)):
        msg = f'reference: {reference} is a number; write the reference as text ("{reference}")'
        raise _fail(path, where, msg)
    item = _expect_cell(path, where, item)
    if item.get("expect") is not None:
        found = data_check(item["expect"], checks, where=f"{path}: {where}: ", field=FIELD)
        item = item | {"expect": found}
    try:
        return ScenarioConfig.model_validate(item)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = field_path(clean_loc(tuple(first["loc"]))) if first["loc"] else "(the object)"
        msg = str(first["msg"]).removeprefix("Value error, ")
        raise _fail(path, where, f"{loc}: {msg}") from exc


def load_scenario_file(
    spec: ScenarioFileConfig, base_dir: Path, *, checks: Mapping[str, object] | None = None
) -> list[ScenarioConfig]:
    """The scenarios of ``spec.file`` (relative to the sweep file's folder), subset as asked.
    The file is data: a question's ``expect`` may pick a check of ``checks`` (the sweep
    file's ``checks:``) by name, never name a callable.

    Raises:
        ConfigError: the file is missing, of an unknown kind, or a line or row is not a
            scenario (the message names it).
        CodeInDataError: a question's ``expect`` names code (checked on every row, before the
            subset is taken: a file that names code is refused whole).
    """
    path = (
        (base_dir / spec.file).resolve() if not Path(spec.file).is_absolute() else Path(spec.file)
    )
    kind = FORMATS.get(path.suffix.lower())
    if kind is None:
        known = ", ".join(sorted(FORMATS))
        raise ConfigError(f"{spec.file!r}: unknown file kind; use one of {known}", field=FIELD)
    if not path.is_file():
        msg = (
            f"{spec.file!r} is not a file (looked for {path}); the path is relative to the "
            "sweep file"
        )
        raise ConfigError(msg, field=FIELD)
    names = checks or {}
    found = [_scenario(path, where, item, names) for where, item in _items(path, kind)]
    if not found:
        raise _fail(path, "file", "holds no scenario")
    if spec.sample is not None:
        if spec.sample.n > len(found):
            msg = f"sample.n is {spec.sample.n} but the file holds {len(found)} scenarios"
            raise ConfigError(msg, field="scenarios.sample.n")
        keep = sorted(random.Random(spec.sample.seed).sample(range(len(found)), spec.sample.n))
        found = [found[i] for i in keep]
    if spec.limit is not None:
        found = found[: spec.limit]
    return found
