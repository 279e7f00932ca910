"""Reading YAML strictly: ``yaml.SafeLoader`` (no arbitrary objects), plus a duplicate key
refused with its line and column (PyYAML keeps the last one silently); sweep files and scenario
files also refuse YAML 1.1's silent readings (:class:`PlainScalarLoader`).
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode

MERGE_TAG = "tag:yaml.org,2002:merge"


class StrictLoader(yaml.SafeLoader):
    """``SafeLoader`` that refuses a key given twice in one mapping."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        """The mapping, refusing a repeated key (``ConstructorError`` with its position)."""
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            if key_node.tag == MERGE_TAG:  # '<<: *base': merged keys may be overridden here
                continue
            key = self.construct_object(key_node, deep=deep)
            try:
                first = seen.setdefault(key, key_node)
            except TypeError:  # an unhashable key: the base class says so
                break
            if first is not key_node:
                mark = key_node.start_mark
                msg = (
                    f"key {key!r} is given twice in one mapping (line {first.start_mark.line + 1} "
                    f"and line {mark.line + 1}); keep one"
                )
                raise ConstructorError(None, None, msg, mark)
        return super().construct_mapping(node, deep=deep)


_DECIMAL = re.compile(r"[-+]?(0|[1-9][0-9]*)")


class PlainScalarLoader(StrictLoader):
    """:class:`StrictLoader` that refuses the YAML 1.1 readings a data file means as text: the
    words ``yes``/``no``/``on``/``off``/``y``/``n`` read as booleans, and integers not written in
    plain decimal (``010`` is 8, ``0x1F`` is 31, ``1:30`` is 5400, ``1_000`` is 1000). ``true``,
    ``false`` and decimal integers keep their meaning; a quoted word is text.
    """

    def construct_yaml_bool(self, node: yaml.ScalarNode) -> bool:
        """``true``/``false`` (any case); any other boolean word is refused with its line."""
        word = str(self.construct_scalar(node))
        if word.lower() not in ("true", "false"):
            msg = (
                f"{word!r} would be read as {word.lower() in ('yes', 'y', 'on')!s} by YAML 1.1; "
                f"write true or false for a boolean, or quote it ('{word}') to keep the word"
            )
            raise ConstructorError(None, None, msg, node.start_mark)
        return bool(super().construct_yaml_bool(node))

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        """A plain decimal integer; ``010``, ``0x1F``, ``1:30`` and ``1_000`` are refused."""
        text = str(self.construct_scalar(node))
        value = int(super().construct_yaml_int(node))
        if not _DECIMAL.fullmatch(text):
            msg = (
                f"{text} would be read as the number {value} by YAML 1.1; write {value} for "
                f"that number, or quote it ('{text}') to keep the text"
            )
            raise ConstructorError(None, None, msg, node.start_mark)
        return value


PlainScalarLoader.add_constructor("tag:yaml.org,2002:bool", PlainScalarLoader.construct_yaml_bool)
PlainScalarLoader.add_constructor("tag:yaml.org,2002:int", PlainScalarLoader.construct_yaml_int)


def load_yaml(text: str, *, plain: bool = False) -> Any:
    """Parse YAML text with :class:`StrictLoader` (:class:`PlainScalarLoader` when ``plain``)."""
    return yaml.load(text, Loader=PlainScalarLoader if plain else StrictLoader)


def yaml_problem(exc: yaml.YAMLError) -> str:
    """A PyYAML error on one line: what, then where (``... (line 3, column 9)``)."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if problem is None:
        return " ".join(str(exc).split())
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    return f"{problem}{where}"


def is_text(value: str) -> bool:
    """True when ``value`` is valid Unicode text (UTF-8 can encode it: no lone surrogates)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
