"""Stable column types for exported records: the model's field types, whatever the data.

``pandas.json_normalize`` infers each column from the values it sees: a run log where no run
failed has a single all-null ``error`` column (so ``"error.type"`` queries break), and an integer
field that is null on some rows (``sequential.seeds_used``, null for the baseline) becomes a
float. :func:`typed` fixes both from the record model: every scalar field, nested fields
included, gets its column with a pandas nullable dtype (``Int64``, ``Float64``, ``boolean``,
``string``), present even when every value is null; a nested model's all-null parent column is
dropped. Mappings with free keys (``manifest``, ``cost``, ``facets_diff``) keep the columns
their data gives.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, Union

from pydantic import BaseModel

_DTYPES = {int: "Int64", float: "Float64", bool: "boolean", str: "string"}


def _scalar(annotation: Any) -> str | None:
    """The pandas dtype of a scalar annotation (``int | None`` -> ``Int64``), None otherwise."""
    origin = typing.get_origin(annotation)
    if origin is Literal:
        kinds = {type(v) for v in typing.get_args(annotation)}
        return _DTYPES.get(kinds.pop()) if len(kinds) == 1 else None
    if origin in (Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _scalar(inner[0]) if len(inner) == 1 else None
    return _DTYPES.get(annotation) if isinstance(annotation, type) else None


def _model(annotation: Any) -> type[BaseModel] | None:
    """The record model an annotation holds (``X | None`` -> X), None otherwise."""
    if typing.get_origin(annotation) in (Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _model(inner[0]) if len(inner) == 1 else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def schema(model: type[BaseModel], prefix: str = "") -> dict[str, str]:
    """Dotted column -> pandas dtype for every scalar field of ``model`` and its sub-models."""
    out: dict[str, str] = {}
    for name, field in model.model_fields.items():
        column = f"{prefix}{name}"
        dtype = _scalar(field.annotation)
        if dtype is not None:
            out[column] = dtype
            continue
        sub = _model(field.annotation)
        if sub is not None:
            out |= schema(sub, f"{column}.")
    return out


def typed(pd: Any, frame: Any, model: type[BaseModel]) -> Any:
    """``frame`` with every scalar column of ``model`` present and of its nullable dtype."""
    columns = schema(model)
    out = frame.copy()
    parents = {c.rsplit(".", 1)[0] for c in columns if "." in c}
    out = out.drop(columns=[c for c in out.columns if c in parents and out[c].isna().all()])
    for column, dtype in columns.items():
        if column not in out.columns:
            out[column] = pd.Series([pd.NA] * len(out), dtype=dtype, index=out.index)
        else:
            out[column] = out[column].astype(dtype)
    return out
