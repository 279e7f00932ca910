"""The schemas ``counterfact schema`` prints from the shipped file are the models' own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from counterfact.orchestrator.drivers.outputs import schemas
from counterfact.orchestrator.drivers.outputs.schemas import (
    SCHEMA_KINDS,
    SHIPPED,
    json_schema,
    shipped_schema,
    shipped_text,
)


def test_the_shipped_file_is_what_the_models_give() -> None:
    # Stale after a change to a config or record model: run scripts/gen_schemas.py.
    assert SHIPPED.read_text(encoding="utf-8") == shipped_text(), (
        "orchestrator/drivers/outputs/schemas.json is stale; run PYTHONPATH=$PWD python "
        "scripts/gen_schemas.py"
    )


@pytest.mark.parametrize("kind", SCHEMA_KINDS)
def test_each_kind_prints_as_the_model_s_schema(kind: str) -> None:
    # Byte for byte as the command prints it, key order included.
    printed = json.dumps(shipped_schema(kind), indent=2)
    assert printed == json.dumps(json_schema(kind), indent=2)


def test_an_unknown_kind_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown schema 'run'; known: config, runs, verdicts"):
        shipped_schema("run")


def test_without_the_file_the_models_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(schemas, "SHIPPED", tmp_path / "schemas.json")
    assert shipped_schema("runs") == json_schema("runs")
