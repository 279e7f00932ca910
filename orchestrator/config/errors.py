"""Turn pydantic's ValidationError into one ConfigError that names field paths and fixes."""

from __future__ import annotations

import difflib
import math
import re
import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from counterfact.exceptions import ConfigError


def field_path(loc: tuple[int | str, ...]) -> str:
    """``('arms', 2, 'facets')`` -> ``arms[2].facets``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "config"


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:  # a tagged member of a discriminated union
        return _models_in(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType, list):
        return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]
    return []


def _model_at(root: type[BaseModel], loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    model: type[BaseModel] | None = root
    for part in loc:
        if isinstance(part, int) or model is None:
            continue
        field = model.model_fields.get(part)
        if field is None:
            return None
        found = _models_in(field.annotation)
        model = found[0] if found else None
    return model


_TAGGED = {"runner": frozenset({"chat", "target"})}
"""Keys holding a discriminated union, and its tags (pydantic puts the tag in the location)."""


def clean_loc(loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """``loc`` without the union-member tags pydantic adds (``str``, ``float``,
    ``function-plain[...]``, a discriminated union's tag): ``expect.tolerance.float`` is
    ``expect.tolerance``, ``runner.chat.prompt`` is ``runner.prompt``.
    """
    kept = [p for p in loc if isinstance(p, int) or not ("[" in p or p in {"str", "int", "float"})]
    if len(kept) > 1 and kept[1] in _TAGGED.get(str(kept[0]), ()):
        del kept[1]
    return tuple(kept)


def _describe(error: ErrorDetails, root: type[BaseModel]) -> str:
    loc = clean_loc(tuple(error["loc"]))
    kind = error["type"]
    if kind == "extra_forbidden":
        parent = _model_at(root, loc[:-1])
        allowed = sorted(parent.model_fields) if parent else []
        key = str(loc[-1])
        hint = difflib.get_close_matches(key, allowed, n=1)
        suggestion = f"did you mean {hint[0]!r}? " if hint else ""
        return (
            f"{field_path(loc)}: unknown key; {suggestion}allowed keys here: {', '.join(allowed)}"
        )
    if kind == "missing":
        if loc == ("runner", "kind"):
            return "runner.kind: required key is missing; add kind: chat for the chat runner"
        return f"{field_path(loc)}: required key is missing; add it"
    received = error.get("input")
    msg = error["msg"].removeprefix("Value error, ")
    if kind == "value_error":  # our own validators already say what was received
        return f"{field_path(loc)}: {msg}"
    number = _number_problem(kind, received)
    if number is not None:
        return f"{field_path(loc)}: {number}"
    shown = repr(received)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    fix = _FIXES.get(kind, "")
    return f"{field_path(loc)}: {msg} (received {shown}){'; ' + fix if fix else ''}"


_NUMBER_KINDS = {"int_type", "int_parsing", "int_from_float", "float_type", "float_parsing"}
_WHOLE_KINDS = {"int_type", "int_parsing", "int_from_float"}
_LARGEST_WHOLE = 2**53
"""A whole-number key given more than this (as a float) is out of range for any key here."""
_EXPONENT = re.compile(r"^\s*([-+]?\d+)(?:\.(\d*))?[eE]([-+]?)(\d+)\s*$")


def _number_problem(kind: str, received: object) -> str | None:
    """What is wrong with a number a number key got, when it is one: out of range (infinite,
    or too large for a whole number), or text YAML did not read as a number (``1e-300``: YAML
    1.1 needs a dot and a signed exponent). None when ``received`` is no number at all.
    """
    if kind not in _NUMBER_KINDS or isinstance(received, bool):
        return None
    text = received if isinstance(received, str) else None
    if text is not None:
        try:
            value = float(text)
        except ValueError:
            return None
    elif isinstance(received, (int, float)):
        value = float(received)
    else:
        return None
    shown = text.strip() if text is not None else repr(received)
    whole = kind in _WHOLE_KINDS
    if not math.isfinite(value) or (whole and abs(value) > _LARGEST_WHOLE):
        allowed = "a whole number" if whole else "a finite number"
        return f"{shown} is out of range; write {allowed} in the range this key allows"
    match = _EXPONENT.match(text or "")
    if match is None:
        return None  # a number pydantic's own words fit, or a quoted plain number
    if whole:
        if not value.is_integer():
            return f"{shown} is not a whole number; write one, e.g. {math.floor(value)}"
        how = f"write {int(value)}"
    else:
        mantissa, fraction, sign, exponent = match.groups()
        how = f"write {mantissa}.{fraction or '0'}e{sign or '+'}{exponent}"
    return (
        f"{shown!r} is read as text, not a number (YAML reads an exponent only after a dot, "
        f"with a sign); {how}"
    )


_FIXES = {
    "int_type": "write a whole number without quotes",
    "int_parsing": "write a whole number without quotes",
    "int_from_float": "write a whole number",
    "float_type": "write a number without quotes",
    "string_type": "write text; quote values YAML would read otherwise ('5', 'no', 'on')",
    "bool_type": "write true or false",
    "dict_type": "write a mapping, e.g. {key: value}",
    "list_type": "write a list, e.g. [a, b]",
    "string_pattern_mismatch": "use only letters, digits, '.', '_' and '-'",
    "callable_type": "write 'package.module:callable' or 'path/to/file.py:callable'",
}


_WHOLESALE = {"model_type", "dict_type", "list_type"}
"""Errors that say a value is not even of a union member's type."""


def _other_member(error: ErrorDetails, errors: list[ErrorDetails]) -> bool:
    """``error`` says the value is not of one union member's type while another member's errors
    reach inside the value (``scenarios:`` a list with a bad item is not a ``{file: ...}``
    mapping, but the list's item is what to fix): a distraction, left out.
    """
    loc = tuple(error["loc"])
    if error["type"] not in _WHOLESALE or len(loc) < 2:
        return False
    parent = loc[:-1]
    return any(
        len(other["loc"]) > len(loc) and tuple(other["loc"][: len(parent)]) == parent
        for other in errors
    )


def config_error(exc: ValidationError, root: type[BaseModel]) -> ConfigError:
    """One ConfigError listing every problem, most specific first."""
    found = exc.errors()
    errors = [e for e in found if not _other_member(e, found)]
    seen: list[str] = []
    for error in errors:
        text = _describe(error, root)
        if text not in seen:
            seen.append(text)
    # A value that fits neither union member yields two errors on one path; keep the first.
    by_path: dict[str, str] = {}
    for text in seen:
        by_path.setdefault(text.split(":", 1)[0], text)
    problems = list(by_path.values())
    head = problems[0]
    if len(problems) > 1:
        head += f"; and {len(problems) - 1} more: " + "; ".join(problems[1:])
    return ConfigError(head)
