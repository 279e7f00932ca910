"""The sweep-file keys :func:`~counterfact.orchestrator.drivers.api.compare_arms` takes as
keyword arguments beyond its named parameters, typed (``**config: Unpack[SweepKeys]``).

Generated from :class:`~counterfact.orchestrator.config.schema.SweepConfig` by
``scripts/gen_api_kwargs.py``; do not edit (a test fails when it is stale).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict


class SweepKeys(TypedDict, total=False):
    """Sweep-file keys passed to ``compare_arms`` by name, validated as in a file."""

    runner_files: list[str]
    """Data files the runner reads (paths or globs, relative to the sweep file): their contents
    join the runner's identity, so an edited corpus or prompt file is a changed runner (the
    resume is refused naming it; the run cache does not serve the old runs).
    """
    ablate_each: list[str]
    """One leave-one-out arm per id (``without:<id>``), beside the baseline."""
    grid: dict[str, list[str | int | float | bool | None]]
    """``{facet.path: [values]}``: one arm per combination, ids like ``model=large,k=3``."""
    cost_key: str
    """The cost key rule 11 judges (consistency, placebo band, cost cause)."""
    checks: dict[str, str | Callable[..., Any]]
    """Named custom checks, ``{name: module:callable or file.py:callable}``: the only code a
    question may ask for. A question file is data and never names a callable itself; its
    ``expect: {kind: custom, target: NAME}`` (or just ``expect: NAME``) picks one of these by
    name. Each is ``callable(reference, output) -> bool`` (True means flipped), imported once
    when the sweep is resolved. See docs/explanation/what-runs-code.md.
    """
    budget: dict[str, float | int]
    """Spend limits over the ``cost`` runners report, e.g. ``{usd: 20}``, and ``runs``: model calls
    (each run's attempts, not a cost key): scheduling stops before recorded spend plus the runs
    in flight would pass a limit (exit 4); raise it and run again to continue. Not part of what
    a run directory means: a resume may change it.
    """
