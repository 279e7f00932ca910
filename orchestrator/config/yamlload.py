"""Reading a sweep file's YAML strictly: ``yaml.SafeLoader`` (no arbitrary objects), plus a
duplicate key refused with its line and column (PyYAML keeps the last one silently).
"""

from __future__ import annotations

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


def load_yaml(text: str) -> Any:
    """Parse YAML text with :class:`StrictLoader`."""
    return yaml.load(text, Loader=StrictLoader)


def is_text(value: str) -> bool:
    """True when ``value`` is valid Unicode text (UTF-8 can encode it: no lone surrogates)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
