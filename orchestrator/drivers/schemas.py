"""JSON Schemas of what counterfact reads and writes, generated from its pydantic models.

``config`` is the sweep file (unknown keys are refused, as the loader refuses them; the string
shorthands ``comparator: exact`` and ``executor: local`` are allowed); ``runs``, ``verdicts``,
``arms``, ``summary`` and ``bisect`` are the records (one line of ``runs.jsonl`` /
``verdicts.jsonl`` / ``arms.jsonl``, and the ``summary.json`` / ``bisect.json`` files).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

SCHEMA_KINDS = ("config", "runs", "verdicts", "arms", "summary", "bisect")
DIALECT = "https://json-schema.org/draft/2020-12/schema"


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
