"""The Python entry point: ``compare_arms`` runs the same engine the CLI runs."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from counterfact.defaults import (
    ALPHA,
    COMPARATOR,
    MAX_CULPRITS,
    MAX_PROBES,
    SAMPLES,
    SIMILARITY,
)
from counterfact.exceptions import ConfigError, CounterfactWarning
from counterfact.orchestrator.config.loading import validate_config
from counterfact.orchestrator.config.resolve import ResolvedSweep, resolve_bisect, resolve_sweep
from counterfact.orchestrator.drivers.bisect import BisectResult, run_bisect
from counterfact.orchestrator.drivers.sweep import SweepResult, run_sweep
from counterfact.orchestrator.engine.watching.events import warn_caller
from counterfact.orchestrator.engine.watching.progress import Progress

if TYPE_CHECKING:  # Unpack is in typing from Python 3.11; the package supports 3.10
    from typing import Unpack

    from counterfact.orchestrator.drivers.sweepkeys import SweepKeys


def _component(value: str | Mapping[str, Any] | Callable[..., Any]) -> Any:
    """A comparator / similarity as the config takes it (strings and callables are shorthands
    the schema expands, the same as in a sweep file).
    """
    return dict(value) if isinstance(value, Mapping) else value


def _folder(base_dir: str | Path | None) -> Path:
    """The folder relative file targets resolve against (default the working directory)."""
    return (Path(base_dir) if base_dir is not None else Path.cwd()).resolve()


def _optional_path(value: str | Path | None) -> Path | None:
    return Path(value) if value is not None else None


def _given(**values: Any) -> dict[str, Any]:
    """The config keys the caller gave (mappings copied), leaving out those left at None."""
    return {k: dict(v) if isinstance(v, Mapping) else v for k, v in values.items() if v is not None}


ELSEWHERE = {
    "output_dir": "pass out= (the run directory itself)",
    "bisect": "call find_culprits(...) for a culprit search",
}
"""File keys compare_arms cannot honour, and what to do instead."""


def _refuse_unusable(config: Mapping[str, object]) -> None:
    for key, instead in ELSEWHERE.items():
        if key in config:
            msg = f"compare_arms does not use {key!r}; {instead}"
            raise ConfigError(msg, field=key)


def compare_arms(
    arms: Sequence[Mapping[str, Any]],
    runner: str | Callable[..., Any] | Mapping[str, Any],
    *,
    samples: int = SAMPLES,
    reference: str | None = None,
    scenarios: Sequence[Mapping[str, Any]] | None = None,
    comparator: str | Mapping[str, Any] | Callable[[str, str], bool] = COMPARATOR,
    similarity: str | Mapping[str, Any] | Callable[[str, list[str]], Sequence[float]] = SIMILARITY,
    executor: str | Mapping[str, Any] | None = None,
    baseline: str | None = None,
    name: str = "compare-arms",
    out: str | Path | None = None,
    base_dir: str | Path | None = None,
    progress: Progress | None = None,
    fresh: bool = False,
    cache_dir: str | Path | None = None,
    runner_version: str | None = None,
    statistics: Mapping[str, Any] | None = None,
    sequential: Mapping[str, Any] | None = None,
    **config: Unpack[SweepKeys],
) -> SweepResult:
    """Rerun every arm ``samples`` times per scenario and judge each against the baseline.

    Args:
        arms: ``[{"id": ..., "facets": {...}, "ablations": [...], "restorations": [...]}]``;
            the first is the baseline unless ``baseline`` names another.
        runner: a callable ``runner(ctx)``, ``"package.module:callable"``, ``"file.py:callable"``
            (relative to ``base_dir``), or a built-in runner: ``{"kind": "chat", ...}``.
        samples: seeded reruns per (scenario, arm); at least 2.
        reference: the expected answer for the single default scenario; None uses the baseline's
            seed-0 output.
        scenarios: ``[{"id": ..., "inputs": {...}, "reference": ...}]`` instead of ``reference``.
        comparator: a kind (``"similarity"``, the default; ``"exact"``, ``"contains"``, ...), a
            mapping, a ``"module:attr"`` target or a callable ``(reference, output) -> bool``
            (True: flipped).
        similarity: the same forms (``"text"``, the default; ``"embedding"``, ...).
        executor: ``"ray"``, ``"local"`` (in-process) or a mapping (``{"kind": "ray", "address":
            "auto"}``); default: in-process for API-bound work, else Ray (how-to/api-agents).
        baseline: the baseline arm id (default the first arm).
        name: the sweep's name, recorded in the summary.
        out: the run directory for the records; None keeps everything in memory.
        base_dir: the folder relative file targets are resolved against.
        progress: told about each finished run.
        fresh: move an existing ``out`` aside (never deleted) instead of resuming it.
        cache_dir: the run cache shared across sweeps (None: no cache).
        runner_version: the runner's identity for resume and the cache (default: its hash).
        statistics: ``{"alpha", "adjust", "family", "pairing"}`` (defaults 0.05, holm, sweep,
            seed).
        sequential: ``{"max_samples": N, "wave": W}``: ``samples`` is the first wave, then
            ``W`` seeds at a time until each arm's anytime-valid test decides (at most ``N``).
        **config: the other sweep-file keys (:class:`~.sweepkeys.SweepKeys`), validated
            exactly as in a file (an unknown key is refused with a did-you-mean).

    Returns:
        A :class:`SweepResult` with one row per (scenario, arm), baseline first.

    Raises:
        ConfigError: the declaration is refused; nothing has run.
        RunDirectoryError: ``out`` already holds records.
    """
    raw = _given(
        name=name,
        runner=runner,
        samples=samples,
        arms=[dict(a) for a in arms],
        comparator=_component(comparator),
        similarity=_component(similarity),
        executor=None if executor is None else _component(executor),
        baseline=baseline,
        reference=reference,
        scenarios=[dict(s) for s in scenarios] if scenarios is not None else None,
        runner_version=runner_version,
        statistics=statistics,
        sequential=sequential,
        **config,
    )
    _refuse_unusable(config)
    sweep = resolve_sweep(validate_config(raw), base_dir=_folder(base_dir))
    return _run(sweep, out, cache_dir, progress, fresh)


def _run(
    sweep: ResolvedSweep,
    out: str | Path | None,
    cache_dir: str | Path | None,
    progress: Progress | None,
    fresh: bool,
) -> SweepResult:
    """Warn about the sweep's notes (as the CLI prints them), then run it."""
    for note in sweep.notes:
        warn_caller(note, CounterfactWarning)
    run_dir, cache = _optional_path(out), _optional_path(cache_dir)
    return run_sweep(sweep, run_dir=run_dir, progress=progress, fresh=fresh, cache_dir=cache)


def find_culprits(
    suspects: Sequence[str],
    runner: str | Callable[..., Any],
    *,
    samples: int = SAMPLES,
    reference: str | None = None,
    inputs: Mapping[str, Any] | None = None,
    baseline: Mapping[str, Any] | None = None,
    comparator: str | Mapping[str, Any] | Callable[[str, str], bool] = COMPARATOR,
    similarity: str | Mapping[str, Any] | Callable[[str, list[str]], Sequence[float]] = SIMILARITY,
    executor: str | Mapping[str, Any] | None = None,
    max_probes: int = MAX_PROBES,
    max_culprits: int = MAX_CULPRITS,
    speculative: bool = False,
    decide: Literal["auto", "majority", "test"] = "auto",
    stop_early: bool = False,
    alpha: float = ALPHA,
    name: str = "find-culprits",
    out: str | Path | None = None,
    base_dir: str | Path | None = None,
    fresh: bool = False,
    cache_dir: str | Path | None = None,
    runner_version: str | None = None,
) -> BisectResult:
    """Find minimal sets of ``suspects`` whose joint ablation flips the answer (rule 10).

    Args:
        suspects: ablation ids, likeliest first (the order only decides the search order).
        runner: as for :func:`compare_arms`; it receives each probe's ids in
            ``ctx.arm.ablations``.
        samples: seeded reruns per probe; at least 2.
        reference: the (wrong) answer to explain; None uses the baseline's seed-0 output.
        inputs: the scenario's inputs.
        baseline: the configuration as it stands, ``{"id": ..., "facets": ..., "ablations": ...}``;
            default an arm ``baseline`` that declares nothing.
        comparator: as for :func:`compare_arms`.
        similarity: as for :func:`compare_arms`.
        executor: as for :func:`compare_arms`.
        base_dir: as for :func:`compare_arms`.
        max_probes: probe budget, the baseline probe included.
        max_culprits: independent culprit sets to search for at most.
        speculative: run the second half of a split alongside the first.
        decide: ``"auto"`` (the default: the majority rule until a probe's seeds split, then
            the test), ``"majority"`` (rule 10) or ``"test"`` (rule 20: paired tests against
            the baseline at ``alpha``, every culprit set re-confirmed on fresh seeds).
        stop_early: stop each probe once its other seeds cannot change its decision.
        alpha: significance level for ``decide="test"``.
        name: recorded in ``bisect.json``.
        out: run directory for ``runs.jsonl`` and ``bisect.json``; None keeps them in memory.
            An existing one is resumed: probes' finished runs are read back.
        fresh: as for :func:`compare_arms`.
        cache_dir: as for :func:`compare_arms`.
        runner_version: as for :func:`compare_arms`.

    Raises:
        ConfigError: a refused declaration; nothing has run.
    """
    raw: dict[str, Any] = {
        "name": name,
        "runner": runner,
        "samples": samples,
        "arms": [dict(baseline)] if baseline is not None else [],
        "scenarios": [{"id": "default", "inputs": dict(inputs or {}), "reference": reference}],
        "comparator": _component(comparator),
        "similarity": _component(similarity),
        "bisect": {
            "suspects": list(suspects),
            "max_probes": max_probes,
            "max_culprits": max_culprits,
            "speculative": speculative,
            "decide": decide,
            "stop_early": stop_early,
        },
        "statistics": {"alpha": alpha},
    } | ({"runner_version": runner_version} if runner_version is not None else {})
    raw |= {"executor": _component(executor)} if executor is not None else {}
    plan = resolve_bisect(validate_config(raw), base_dir=_folder(base_dir))
    return run_bisect(
        plan, run_dir=_optional_path(out), fresh=fresh, cache_dir=_optional_path(cache_dir)
    )
