"""The runner contract: what a runner receives and what it may return."""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeAlias

from counterfact.exceptions import RunnerReturnError
from counterfact.records.runs import MAX_RUN_COST


@dataclass(frozen=True)
class ScenarioView:
    """The scenario a run belongs to, as the runner sees it."""

    id: str
    """The scenario's id."""
    inputs: Mapping[str, Any]
    """The scenario's fixed inputs (a question, a case ...)."""


@dataclass(frozen=True)
class ArmView:
    """The arm a run belongs to, as the runner sees it."""

    id: str
    """The arm's id."""
    facets: Mapping[str, Any]
    """The declared facets as a nested mapping (dotted keys already expanded)."""
    ablations: tuple[str, ...] = ()
    """Ids of things the runner must remove."""
    restorations: tuple[str, ...] = ()
    """Ids of things the runner must add back."""
    seed_offset: int = 0
    """``placebo: fresh`` arms: added to the seed index, so the runner sees seeds disjoint from
    the baseline's (``ctx.seed`` already includes it); 0 for every other arm."""


@dataclass(frozen=True)
class RunContext:
    """Everything one call of the runner gets: ``runner(ctx)``."""

    scenario: ScenarioView
    arm: ArmView
    seed: int
    """The seed of this rerun; seeds are ``0..samples-1`` for every arm, so runs pair by seed (a
    ``placebo: fresh`` arm's runner sees ``seed + arm.seed_offset``)."""

    def for_runner(self) -> RunContext:
        """The context the runner is called with: a fresh placebo's seed moved to its range."""
        if not self.arm.seed_offset:
            return self
        return replace(self, seed=self.seed + self.arm.seed_offset)


@dataclass(frozen=True)
class RunResult:
    """What a runner may return instead of a bare string."""

    output: str
    """The program's answer."""
    manifest: Mapping[str, Any] | None = None
    """What the run says about its own configuration (checked against the arm's facets)."""
    cost: Mapping[str, float] | None = field(default=None)
    """Numbers such as ``tokens``, ``loops``, ``usd``; each must be finite and not negative."""


RunnerReturn: TypeAlias = "str | Mapping[str, Any] | RunResult"


class Runner(Protocol):
    """A user's program, rerun once per (scenario, arm, seed).

    The engine cannot reach into the program: the runner applies the arm (``ctx.arm``), seeds its
    randomness with ``ctx.seed``, and reports what it actually ran in ``manifest``.
    """

    def __call__(self, ctx: RunContext, /) -> RunnerReturn | Awaitable[RunnerReturn]:
        """Run once; return the output text, a mapping, or a :class:`RunResult` (an
        ``async def`` runner returns them when awaited).
        """
        ...


_RESULT_KEYS = frozenset({"output", "manifest", "cost"})


def coerce_result(value: object) -> RunResult:
    """Check a runner's return value and turn it into a :class:`RunResult`.

    Raises:
        RunnerReturnError: the value breaks the runner contract; the message says how.
    """
    output: object
    manifest: object
    cost: object
    if isinstance(value, RunResult):
        output, manifest, cost = value.output, value.manifest, value.cost
    elif isinstance(value, str):
        return RunResult(output=value)
    elif isinstance(value, Mapping):
        unknown = sorted(str(k) for k in value if k not in _RESULT_KEYS)
        if unknown:
            msg = (
                f"runner returned a mapping with unknown keys {unknown}; "
                "allowed keys are 'output', 'manifest', 'cost'"
            )
            raise RunnerReturnError(msg)
        if "output" not in value:
            msg = "runner returned a mapping without 'output'; return {'output': <str>, ...}"
            raise RunnerReturnError(msg)
        output, manifest, cost = value["output"], value.get("manifest"), value.get("cost")
    else:
        msg = (
            f"runner returned {type(value).__name__}; return a str, a mapping with 'output', "
            "or counterfact.RunResult"
        )
        raise RunnerReturnError(msg)
    if not isinstance(output, str):
        msg = f"runner output must be a str, got {type(output).__name__}: {output!r:.80}"
        raise RunnerReturnError(msg)
    if manifest is not None and not isinstance(manifest, Mapping):
        msg = f"runner manifest must be a mapping, got {type(manifest).__name__}"
        raise RunnerReturnError(msg)
    return RunResult(
        output=output,
        manifest=_check_manifest(manifest) if manifest is not None else None,
        cost=_check_cost(cost),
    )


MAX_MANIFEST_DEPTH = 64
"""How deeply a manifest may nest (mappings and lists): deeper data could be written to
``runs.jsonl`` but not read back by every JSON parser (pydantic's stops near 200 levels)."""

MAX_MANIFEST_BYTES = 1_000_000
"""The largest manifest, as JSON: it is written into every record line."""


def _check_depth(manifest: Mapping[Any, Any]) -> None:
    """Refuse nesting deeper than :data:`MAX_MANIFEST_DEPTH` (iteratively: no recursion limit)."""
    stack: list[tuple[Any, int]] = [(manifest, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_MANIFEST_DEPTH:
            msg = (
                f"runner manifest nests deeper than {MAX_MANIFEST_DEPTH} levels; report a flatter "
                "manifest (dotted keys such as 'retriever.index')"
            )
            raise RunnerReturnError(msg)
        if isinstance(node, Mapping):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list | tuple):
            stack.extend((v, depth + 1) for v in node)


def _check_manifest(manifest: Mapping[Any, Any]) -> dict[str, Any]:
    """A manifest is recorded as JSON: text keys; text, numbers, booleans, null, lists, mappings;
    at most :data:`MAX_MANIFEST_DEPTH` deep and :data:`MAX_MANIFEST_BYTES` long.
    """
    _check_depth(manifest)

    def bad_key(node: Any) -> Any:
        if isinstance(node, Mapping):
            for key, value in node.items():
                if not isinstance(key, str):
                    return key
                found = bad_key(value)
                if found is not None:
                    return found
        elif isinstance(node, list | tuple):
            for value in node:
                found = bad_key(value)
                if found is not None:
                    return found
        return None

    key = bad_key(manifest)
    if key is not None:
        msg = f"runner manifest keys must be strings, got {key!r} ({type(key).__name__})"
        raise RunnerReturnError(msg)
    try:
        text = json.dumps(manifest, allow_nan=False)
    except (TypeError, ValueError) as exc:
        msg = (
            f"runner manifest must be JSON data (text, finite numbers, booleans, null, lists, "
            f"mappings): {exc}"
        )
        raise RunnerReturnError(msg) from exc
    if len(text) > MAX_MANIFEST_BYTES:
        msg = (
            f"runner manifest is {len(text):,} characters as JSON, more than "
            f"{MAX_MANIFEST_BYTES:,}; report what the run was configured with, not its data"
        )
        raise RunnerReturnError(msg)
    data: dict[str, Any] = json.loads(text)
    return data


def _check_cost(cost: object) -> dict[str, float] | None:
    if cost is None:
        return None
    if not isinstance(cost, Mapping):
        msg = f"runner cost must be a mapping of name -> number, got {type(cost).__name__}"
        raise RunnerReturnError(msg)
    checked: dict[str, float] = {}
    for key, number in cost.items():
        if not isinstance(key, str):
            msg = f"runner cost keys must be strings, got {key!r}"
            raise RunnerReturnError(msg)
        if isinstance(number, bool) or not isinstance(number, int | float):
            msg = f"runner cost {key!r} must be a number, got {type(number).__name__}"
            raise RunnerReturnError(msg)
        if not math.isfinite(number):
            msg = f"runner cost {key!r} must be finite, got {number!r}"
            raise RunnerReturnError(msg)
        if number > MAX_RUN_COST:  # a sum of such numbers overflows every total it joins
            msg = (
                f"runner cost {key!r} is {number!r}, more than {MAX_RUN_COST:.0e} for one run: "
                "not a spend (a server's usage that lies?); report what the run spent"
            )
            raise RunnerReturnError(msg)
        if number < 0:  # a refund would lower the spend a budget limits
            msg = (
                f"runner cost {key!r} must not be negative, got {number!r}: report what the run "
                "spent (0 or more)"
            )
            raise RunnerReturnError(msg)
        checked[key] = float(number)
    return checked
