"""From a validated SweepConfig to a ResolvedSweep: everything knowable checked before any run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from counterfact.exceptions import ConfigError, RefusalError
from counterfact.orchestrator.config import ComparatorConfig, SimilarityConfig, SweepConfig
from counterfact.orchestrator.expand import expand_arms
from counterfact.orchestrator.imports import (
    RunnerRef,
    describe_target,
    load_target,
    parse_target,
)
from counterfact.probes.arms import ArmSpec, check_arms
from counterfact.probes.comparators import (
    Comparator,
    CustomComparator,
    ExactComparator,
    NormalizedComparator,
    NumericComparator,
    SimilarityComparator,
    first_number,
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
    skipped: tuple[str, ...] = ()
    """Grid combinations skipped because an identical arm was already declared."""

    def baseline_arm(self) -> ArmSpec:
        """The baseline's ArmSpec."""
        return next(a for a in self.arms if a.id == self.baseline)

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


def _check_bisect(config: SweepConfig, arms: tuple[ArmSpec, ...], baseline: str) -> None:
    if config.bisect is None:
        msg = (
            "'counterfact bisect' needs a 'bisect:' section with 'suspects' (ranked ablation "
            "ids); see the README"
        )
        raise ConfigError(msg, field="bisect")
    base = next((a for a in arms if a.id == baseline), None)
    if base is None:
        known = ", ".join(a.id for a in arms)
        msg = f"baseline {baseline!r} is not an arm id; known arms: {known}"
        raise RefusalError(msg, field="baseline")
    for i, suspect in enumerate(config.bisect.suspects):
        if suspect in base.ablations:
            msg = f"{suspect!r} is already ablated by the baseline {baseline!r}; remove it"
            raise RefusalError(msg, field=f"bisect.suspects[{i}]")
    ids = [s.id for s in config.resolved_scenarios()]
    wanted = config.bisect.scenario
    if wanted is None and len(ids) > 1:
        msg = (
            f"the sweep has {len(ids)} scenarios; name one with bisect.scenario ({', '.join(ids)})"
        )
        raise ConfigError(msg, field="bisect.scenario")
    if wanted is not None and wanted not in ids:
        msg = f"scenario {wanted!r} is not declared; known scenarios: {', '.join(ids)}"
        raise ConfigError(msg, field="bisect.scenario")


def resolve_sweep(
    config: SweepConfig,
    *,
    base_dir: Path,
    source: Path | None = None,
    overrides: tuple[str, ...] = (),
    for_bisect: bool = False,
) -> ResolvedSweep:
    """Check everything knowable from the declaration (DESIGN rule 8) and load every target.

    With ``for_bisect``, the arms only have to hold the baseline, and the ``bisect`` section
    must be present and consistent with it.

    Raises:
        ConfigError: on any refusal or unloadable target; nothing has run.
    """
    expanded = expand_arms(config)
    arms = expanded.arms
    baseline = config.baseline_id()
    if for_bisect:
        _check_bisect(config, arms, baseline)
    else:
        check_arms(arms, baseline, expanded.origins)
    scenarios = _scenarios(config)
    comparator = _comparator(config.comparator, base_dir)
    if isinstance(comparator, NumericComparator):
        for i, sc in enumerate(scenarios):
            if sc.reference is not None and first_number(sc.reference) is None:
                where = "reference" if config.scenarios is None else f"scenarios[{i}].reference"
                msg = (
                    f"the numeric comparator needs a number in the reference, got "
                    f"{sc.reference!r}; write the expected number, or choose another comparator"
                )
                raise RefusalError(msg, field=where)
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
        comparator=comparator,
        similarity=_similarity(config.similarity, base_dir),
        runner=runner,
        base_dir=base_dir,
        source=source,
        overrides=overrides,
        skipped=expanded.skipped,
    )
