"""Component registries: a kind name -> how to build it and which options it takes.

The config schema, the CLI's choices and the resolver all read the same registry
(:data:`counterfact.probes.comparators.COMPARATORS`,
:data:`counterfact.probes.similarity.SIMILARITIES`), so adding a kind is one entry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Kind(Generic[T]):
    """One registered kind of component."""

    build: Callable[[Mapping[str, Any]], T]
    """Builds the component from its options (only those given; a target already loaded)."""
    takes: frozenset[str] = frozenset()
    """Option names this kind accepts."""
    needs: frozenset[str] = frozenset()
    """Option names this kind requires."""


_EXAMPLES = {
    "target": "package.module:callable",
    "pattern": "<regular expression; group 1, if any, is the answer>",
    "options": "[<choice>, <choice>, ...]",
    "model": "<the judge model's name>",
}


def option_problem(
    registry: Mapping[str, Kind[Any]], kind: str, given: Mapping[str, Any]
) -> str | None:
    """Why ``given`` options do not suit a known ``kind`` (a message naming the fix), or None."""
    if kind not in registry:
        return None  # the kind field itself reports an unknown name
    entry = registry[kind]
    for name in sorted(entry.needs - set(given)):
        example = _EXAMPLES.get(name, "...")
        return f"kind {kind!r} needs '{name}: {example}'"
    for name in sorted(set(given) - entry.takes):
        owners = sorted(k for k, v in registry.items() if name in v.takes)
        which = " or ".join(repr(o) for o in owners)
        return f"'{name}' applies only to kind {which}, not {kind!r}; remove it"
    return None
