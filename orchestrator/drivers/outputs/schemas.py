"""JSON Schemas of what counterfact reads and writes, generated from its pydantic models.

``config`` is the sweep file (unknown keys are refused, as the loader refuses them; the string
shorthands ``comparator: exact`` and ``executor: local`` are allowed); ``runs``, ``verdicts``,
``arms``, ``summary`` and ``bisect`` are the records (one line of ``runs.jsonl`` /
``verdicts.jsonl`` / ``arms.jsonl``, and the ``summary.json`` / ``bisect.json`` files).

``counterfact schema`` prints :func:`shipped_schema`: the same schemas written ahead of time to
``schemas.json`` beside this module by ``scripts/gen_schemas.py`` (a test holds the file to
:func:`json_schema`), since building the models to print them took the command past 0.4 s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel

SCHEMA_KINDS = ("config", "runs", "verdicts", "arms", "summary", "bisect")
DIALECT = "https://json-schema.org/draft/2020-12/schema"
SHIPPED = Path(__file__).with_name("schemas.json")
"""Every kind's schema, as :func:`shipped_text` gives it (written by ``scripts/gen_schemas.py``)."""


def shipped_schema(kind: str = "config") -> dict[str, Any]:
    """The JSON Schema of ``kind`` as shipped in :data:`SHIPPED`, without building a model.

    Equal to :func:`json_schema` (a test holds the file to it); where the file is missing (a
    copy of the package without its data), :func:`json_schema` itself.

    Raises:
        ValueError: an unknown kind (the message lists the known ones).
    """
    try:
        text = SHIPPED.read_text(encoding="utf-8")
    except FileNotFoundError:
        return json_schema(kind)
    schemas: dict[str, dict[str, Any]] = json.loads(text)
    if kind not in schemas:
        msg = f"unknown schema {kind!r}; known: {', '.join(SCHEMA_KINDS)}"
        raise ValueError(msg)
    return schemas[kind]


def shipped_text() -> str:
    """What :data:`SHIPPED` should hold: every kind's :func:`json_schema`, by kind."""
    schemas = {kind: json_schema(kind) for kind in SCHEMA_KINDS}
    return json.dumps(schemas, indent=1, ensure_ascii=False) + "\n"


def json_schema(kind: str = "config") -> dict[str, Any]:
    """The JSON Schema of ``kind`` (one of :data:`SCHEMA_KINDS`).

    Raises:
        ValueError: an unknown kind (the message lists the known ones).
    """
    from counterfact.orchestrator.config.schema import SweepConfig
    from counterfact.records.arms import ArmVerdictRecord
    from counterfact.records.bisect import BisectRecord
    from counterfact.records.runs import RunRecord
    from counterfact.records.summary import SweepSummary
    from counterfact.records.verdicts import VerdictRecord

    models: dict[str, type[BaseModel]] = {
        "config": SweepConfig,
        "runs": RunRecord,
        "verdicts": VerdictRecord,
        "arms": ArmVerdictRecord,
        "summary": SweepSummary,
        "bisect": BisectRecord,
    }
    if kind not in models:
        msg = f"unknown schema {kind!r}; known: {', '.join(SCHEMA_KINDS)}"
        raise ValueError(msg)
    schema = models[kind].model_json_schema(by_alias=True)
    if kind == "config":
        _allow_shorthands(schema)
    return {"$schema": DIALECT, "$id": f"counterfact:{kind}", **schema}


def _allow_shorthands(schema: dict[str, Any]) -> None:
    """``comparator: exact``, ``similarity: text``, ``executor: local`` (or a target string)."""
    for name in ("comparator", "similarity", "executor"):
        prop = schema["properties"][name]
        schema["properties"][name] = {
            "anyOf": [{k: v for k, v in prop.items() if k != "default"}, {"type": "string"}],
            "description": "A mapping, or a string shorthand: a kind name"
            + ("." if name == "executor" else ", or a module:attr target."),
        }
