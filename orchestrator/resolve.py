"""From a validated SweepConfig to a ResolvedSweep: everything knowable checked before any run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from counterfact.exceptions import ConfigError, RefusalError
from counterfact.orchestrator.config import ComparatorConfig, SimilarityConfig, SweepConfig
from counterfact.orchestrator.imports import (
    RunnerRef,
    describe_target,
    load_target,
    parse_target,
)
from counterfact.probes.arms import ArmSpec, check_arms, flatten_facets
from counterfact.probes.comparators import (
    Comparator,
    CustomComparator,
    ExactComparator,
    NormalizedComparator,
    NumericComparator,
    SimilarityComparator,
)
from counterfact.probes.similarity import CustomSimilarity, Similarity, TextSimilarity


@dataclass(frozen=True)
class ScenarioSpec:
    """One scenario, resolved."""

    id: str
    inputs: Mapping[str, Any]
    reference: str | None


@dataclass(frozen=True)
class ResolvedSweep:
    """A sweep ready to plan: arms flattened and refused-or-accepted, components resolved."""

    config: SweepConfig
    arms: tuple[ArmSpec, ...]
    baseline: str
    scenarios: tuple[ScenarioSpec, ...]
    comparator: Comparator
    similarity: Similarity
    runner: RunnerRef
    base_dir: Path
    source: Path | None = None
    overrides: tuple[str, ...] = ()

    def resolved_config(self) -> dict[str, Any]:
        """The config as JSON data, callables shown as ``module:qualname``."""
        data = self.config.model_dump(mode="python")
        data["runner"] = describe_target(self.config.runner)
        data["baseline"] = self.baseline
        data["scenarios"] = [
            {"id": s.id, "inputs": dict(s.inputs), "reference": s.reference} for s in self.scenarios
        ]
        data.pop("reference", None)
        for section in ("comparator", "similarity"):
            if data[section].get("target") is not None:
                data[section]["target"] = describe_target(data[section]["target"])
        return data


def _callable(target: object, base_dir: Path, field: str) -> Any:
    if isinstance(target, str):
        return load_target(parse_target(target, base_dir=base_dir, field=field), field=field)
    return target


def _comparator(cfg: ComparatorConfig, base_dir: Path) -> Comparator:
    if cfg.kind == "exact":
        return ExactComparator()
    if cfg.kind == "normalized":
        return NormalizedComparator()
    if cfg.kind == "numeric":
        return NumericComparator(tolerance=float(cfg.tolerance or 0.0))
    if cfg.kind == "custom":
        return CustomComparator(_callable(cfg.target, base_dir, "comparator.target"))
    threshold = 0.8 if cfg.threshold is None else float(cfg.threshold)
    return SimilarityComparator(threshold=threshold)


def _similarity(cfg: SimilarityConfig, base_dir: Path) -> Similarity:
    if cfg.kind == "custom":
        return CustomSimilarity(_callable(cfg.target, base_dir, "similarity.target"))
    return TextSimilarity()


def _scenarios(config: SweepConfig) -> tuple[ScenarioSpec, ...]:
    specs: list[ScenarioSpec] = []
    seen: dict[str, int] = {}
    for i, sc in enumerate(config.resolved_scenarios()):
        if not sc.id.strip():
            msg = "scenario id is blank; give every scenario a short unique id"
            raise RefusalError(msg, field=f"scenarios[{i}].id")
        if sc.id in seen:
            msg = f"scenario id {sc.id!r} is already used by scenarios[{seen[sc.id]}]"
            raise RefusalError(msg, field=f"scenarios[{i}].id")
        seen[sc.id] = i
        specs.append(ScenarioSpec(sc.id, dict(sc.inputs), sc.reference))
    if not specs:
        msg = "scenarios is empty; remove the key for one default scenario, or list some"
        raise ConfigError(msg, field="scenarios")
    return tuple(specs)


def resolve_sweep(
    config: SweepConfig,
    *,
    base_dir: Path,
    source: Path | None = None,
    overrides: tuple[str, ...] = (),
) -> ResolvedSweep:
    """Check everything knowable from the declaration (DESIGN rule 8) and load every target.

    Raises:
        ConfigError: on any refusal or unloadable target; nothing has run.
    """
    arms = tuple(
        ArmSpec(
            id=a.id,
            facets=flatten_facets(a.facets, field=f"arms[{i}].facets"),
            ablations=tuple(a.ablations),
            restorations=tuple(a.restorations),
        )
        for i, a in enumerate(config.arms)
    )
    baseline = config.baseline_id()
    check_arms(arms, baseline)
    scenarios = _scenarios(config)
    runner: RunnerRef
    if isinstance(config.runner, str):
        runner = parse_target(config.runner, base_dir=base_dir, field="runner")
        load_target(runner, field="runner")
    else:
        runner = config.runner
    return ResolvedSweep(
        config=config,
        arms=arms,
        baseline=baseline,
        scenarios=scenarios,
        comparator=_comparator(config.comparator, base_dir),
        similarity=_similarity(config.similarity, base_dir),
        runner=runner,
        base_dir=base_dir,
        source=source,
        overrides=overrides,
    )
