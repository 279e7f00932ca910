"""``--set dotted.key=value`` overrides applied to the raw config before validation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

from counterfact.exceptions import ConfigError


def parse_override(text: str) -> tuple[list[str], Any]:
    """``"executor.max_in_flight=8"`` -> ``(['executor', 'max_in_flight'], 8)``.

    The value is read as a YAML scalar or flow value, so ``8`` is an int, ``true`` a bool and
    ``[a, b]`` a list; quote it (``name='007'``) to keep a string.
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
    """Apply each override in order; a numeric segment indexes a list (``arms.1.id=x``)."""
    for text in overrides:
        parts, value = parse_override(text)
        node: Any = raw
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            where = ".".join(parts[: i + 1])
            if isinstance(node, list):
                if not part.isdigit() or int(part) >= len(node):
                    msg = f"--set {text!r}: {where!r} is not an index of a list of {len(node)}"
                    raise ConfigError(msg, field="--set")
                if last:
                    node[int(part)] = value
                else:
                    node = node[int(part)]
            elif isinstance(node, dict):
                if last:
                    node[part] = value
                else:
                    node = node.setdefault(part, {})
            else:
                msg = f"--set {text!r}: {'.'.join(parts[:i])!r} is a value, not a mapping"
                raise ConfigError(msg, field="--set")
    return raw
