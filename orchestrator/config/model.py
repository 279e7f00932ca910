"""The base of every sweep-file model, and what a target may be."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictStr

Target = StrictStr | Callable[..., Any]
"""A ``package.module:attr`` / ``path/file.py:attr`` string, or (Python API) the callable."""


class _Model(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, arbitrary_types_allowed=True, use_attribute_docstrings=True
    )
