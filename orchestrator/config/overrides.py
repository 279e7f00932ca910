"""``--set dotted.key=value`` overrides applied to the raw config before validation.

``--set key=null`` (or ``~``) drops the key, as if the file had never written it: the schema's
default applies (every key that takes null defaults to null, so this also unsets those), and a
key the file must have is then named as missing. On a list element it removes the element
(``--set arms.3=null`` drops that arm). Dropping a key the file does not have changes nothing.
Quote the word (``--set "name='null'"``) to set the text ``null``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

from counterfact.exceptions import ConfigError


def parse_override(text: str) -> tuple[list[str], Any]:
    """``"executor.max_in_flight=8"`` -> ``(['executor', 'max_in_flight'], 8)``.

    The value is read as a YAML scalar or flow value, so ``8`` is an int, ``true`` a bool and
    ``[a, b]`` a list; quote it (``name='007'``) to keep a string. ``null`` (or ``~``) is None:
    :func:`apply_overrides` drops the key.
    """
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        msg = f"--set expects dotted.key=value, got {text!r}"
        raise ConfigError(msg, field="--set")
    parts = key.strip().split(".")
    if any(not p for p in parts):
        msg = f"--set key {key!r} has an empty segment"
        raise ConfigError(msg, field="--set")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as exc:
        msg = f"--set value for {key!r} is not valid YAML: {raw!r}"
        raise ConfigError(msg, field="--set") from exc
    return parts, value


def apply_overrides(raw: dict[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """Apply each override in order; a numeric segment indexes a list (``arms.1.id=x``), and a
    null value drops the key (or list element) instead of setting it.
    """
    for text in overrides:
        parts, value = parse_override(text)
        node: Any = raw
        for i, part in enumerate(parts):
            where = ".".join(parts[: i + 1])
            if isinstance(node, list):
                if not part.isdigit() or int(part) >= len(node):
                    msg = f"--set {text!r}: {where!r} is not an index of a list of {len(node)}"
                    raise ConfigError(msg, field="--set")
                key: int | str = int(part)
            elif isinstance(node, dict):
                key = part
                if i < len(parts) - 1 and part not in node:
                    if value is None:
                        break  # dropping below a key the file does not have: nothing to drop
                    node[part] = {}
            else:
                msg = f"--set {text!r}: {'.'.join(parts[:i])!r} is a value, not a mapping"
                raise ConfigError(msg, field="--set")
            if i < len(parts) - 1:
                node = node[key]
            elif value is None:
                _drop(node, key)
            else:
                node[key] = value
    return raw


def _drop(node: dict[str, Any] | list[Any], key: int | str) -> None:
    """Remove ``key`` from a mapping (when there) or the element at index ``key`` of a list."""
    if isinstance(node, list):
        del node[int(key)]
    else:
        node.pop(str(key), None)
