"""From a validated SweepConfig to a ResolvedSweep: everything knowable checked before any run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

from counterfact.defaults import ALTERNATIVE
from counterfact.exceptions import ConfigError
from counterfact.orchestrator.config.bisectsettings import BisectSettings
from counterfact.orchestrator.config.chatcheck import check_chat
from counterfact.orchestrator.config.chatparts_check import suspect_parts
from counterfact.orchestrator.config.checks import (
    CheckBuilder,
    build_component,
    check_references,
    declared_as,
    owner_of,
)
from counterfact.orchestrator.config.executor_choice import ExecutorChoice, choose_executor
from counterfact.orchestrator.config.expand import ExpandedArms, expand_arms
from counterfact.orchestrator.config.plannotes import bound_plan, unknown_facets, unused_settings
from counterfact.orchestrator.config.runnerfiles import files_digest, runner_files
from counterfact.orchestrator.config.scenariofiles import load_scenario_file
from counterfact.orchestrator.config.schema import (
    BisectConfig,
    ScenarioConfig,
    ScenarioFileConfig,
    SweepConfig,
)
from counterfact.orchestrator.config.targets import parse_target
from counterfact.orchestrator.engine.calling.worker import RetryPolicy
from counterfact.orchestrator.engine.executors.options import ExecutorOptions
from counterfact.orchestrator.engine.executors.pooling import PoolSettings
from counterfact.orchestrator.engine.loading.heap import judging_heap
from counterfact.orchestrator.engine.loading.loader import (
    RunnerRef,
    TargetRef,
    describe_target,
    load_target,
    runner_identity,
)
from counterfact.orchestrator.runners.chat import ChatRunner
from counterfact.orchestrator.runners.chatconfig import ChatRunnerConfig
from counterfact.orchestrator.runners.chatplan import plan_for
from counterfact.probes.arms import (
    ArmSpec,
    check_arms,
    check_baseline,
    check_not_ablated,
    nest_facets,
)
from counterfact.probes.comparators import Comparator
from counterfact.probes.ids import check_ids
from counterfact.probes.scenarios import ScenarioSpec
from counterfact.probes.similarity import SIMILARITIES, Similarity
from counterfact.records.fingerprint import SequentialDesign
from counterfact.records.summary import StatisticsRecord
from counterfact.verdicts.stats.settings import Waves, stop_threshold

T = TypeVar("T")


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
    executor: ExecutorChoice
    """The executor kind the runs go to, and why (the default fits the work: see
    :mod:`~counterfact.orchestrator.config.executor_choice`)."""
    source: Path | None = None
    overrides: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    """Grid combinations skipped because an identical arm was already declared."""
    notes: tuple[str, ...] = ()
    """Things worth a look that are not errors (a facet the baseline does not declare, keys
    dropped by ``--executor local``); the CLI prints them as ``note:`` lines."""

    @cached_property
    def runner_identity(self) -> str:
        """The runner's identity for resume and the run cache (its module source is hashed once
        per resolved sweep, however often preflight, fingerprint and cache ask), with the digest
        of its ``runner_files`` when it lists any.
        """
        version = self.config.runner_version
        if isinstance(self.runner, ChatRunner):
            found = self.runner.identity(version)
        else:
            label = describe_target(self.config.runner)
            found = runner_identity(self.runner, label=label, version=version)
        return f"{found}+files:{files_digest(self.runner_files)}" if self.runner_files else found

    @cached_property
    def runner_files(self) -> tuple[tuple[str, str], ...]:
        """``(path, sha256 prefix)`` of each file ``runner_files`` covers."""
        return runner_files(self.config.runner_files, self.base_dir)

    @property
    def name(self) -> str:
        """The sweep's name (its run directory's default name, the logs' ``sweep``)."""
        return self.config.name

    @property
    def samples(self) -> int:
        """Seeds per (scenario, arm); a sequential sweep's first wave (and minimum)."""
        return self.config.samples

    @property
    def max_seeds(self) -> int:
        """Seeds per (scenario, arm) at most: a sequential sweep's cap, else ``samples``."""
        waves = self.waves
        return waves.max_samples if waves is not None else self.samples

    @property
    def cost_key(self) -> str:
        """The ``cost`` key the verdicts report spend by."""
        return self.config.cost_key

    @property
    def budget_limits(self) -> dict[str, float]:
        """The ``budget:`` section: a limit per cost key (empty: no budget)."""
        return {key: float(limit) for key, limit in self.config.budget.items()}

    @property
    def runner_version(self) -> str | None:
        """The declared ``runner_version`` (None: the runner's module source is its identity)."""
        return self.config.runner_version

    @property
    def cache_dir(self) -> Path | None:
        """The config's run cache folder (None: no cache unless the caller names one)."""
        return Path(self.config.cache_dir) if self.config.cache_dir else None

    @cached_property
    def statistics(self) -> StatisticsRecord:
        """The ``statistics:`` section as the judging settings: its record, read off the
        validated section (what ``summary.json`` holds is what judged).
        """
        return StatisticsRecord.model_validate(self.config.statistics)

    @cached_property
    def waves(self) -> Waves | None:
        """The ``sequential:`` section resolved (None: a fixed-sample sweep); the stop threshold
        covers the whole family.
        """
        seq = self.config.sequential
        if seq is None:
            return None
        stats = self.statistics
        family = (len(self.arms) - 1) * (len(self.scenarios) if stats.family == "sweep" else 1)
        return Waves(
            samples=self.samples,
            wave=seq.wave_size(self.samples),
            max_samples=seq.max_samples,
            alpha=stats.alpha,
            threshold=stop_threshold(stats.alpha, stats.adjust, family),
            alternative=stats.alternative,
            min_effect=seq.min_effect,
        )

    @cached_property
    def design(self) -> SequentialDesign | None:
        """What a sequential sweep's decisions depend on, besides the seeds and the cap (part
        of its run directory's fingerprint); None for a fixed-sample sweep.
        """
        seq, waves = self.config.sequential, self.waves
        if seq is None or waves is None:
            return None
        stats = self.statistics
        # the direction is recorded when not the default (so a directory written before it
        # existed still resumes); a change on resume is refused: a direction picked after
        # seeing the looks would spoil the test's error rate
        return SequentialDesign(
            samples=self.samples,
            wave=waves.wave,
            alpha=stats.alpha,
            adjust=stats.adjust,
            family=stats.family,
            pairing=stats.pairing,
            arms=sorted(a.id for a in self.arms),
            alternative=stats.alternative if stats.alternative != ALTERNATIVE else None,
            min_effect=seq.min_effect,
        )

    @cached_property
    def executor_options(self) -> ExecutorOptions:
        """The ``executor:`` section as the executor's options."""
        cfg = self.config.executor
        rate = cfg.rate_limit
        per_minute = rate.requests_per_minute
        runner = self.runner
        ship = runner.location if isinstance(runner, TargetRef) and runner.kind == "file" else None
        return ExecutorOptions(
            policy=RetryPolicy(
                retries=cfg.retries, retry_on=frozenset(cfg.retry_on), max_wait_s=rate.max_wait_s
            ),
            address=cfg.address,
            max_in_flight=cfg.max_in_flight,
            num_cpus=cfg.num_cpus,
            timeout_s=None if cfg.timeout_s is None else float(cfg.timeout_s),
            infra_retries=cfg.infra_retries,
            join_timeout_s=float(cfg.join_timeout_s),
            ship_dir=None if ship is None else str(Path(ship).parent),
            pool=PoolSettings(
                concurrency=cfg.concurrency,
                per_minute=None if per_minute is None else float(per_minute),
            ),
        )

    def run_dir_for(self, out: str | Path | None, suffix: str = "") -> Path:
        """``out``, else ``<output_dir>/<name><suffix>``."""
        return Path(out) if out else Path(self.config.output_dir) / (self.config.name + suffix)

    def comparator_for(self, scenario: ScenarioSpec) -> Comparator:
        """The check that judges ``scenario``: its own ``expect``, else the sweep's comparator."""
        return scenario.check(self.comparator)

    def baseline_arm(self) -> ArmSpec:
        """The baseline's ArmSpec."""
        return next(a for a in self.arms if a.id == self.baseline)

    def resolved_config(self) -> dict[str, Any]:
        """The config as JSON data, callables shown as ``module:qualname``."""
        data = self.config.model_dump(mode="python")
        if not isinstance(self.config.runner, ChatRunnerConfig):  # a chat runner's section stays
            data["runner"] = describe_target(self.config.runner)
        data["baseline"] = self.baseline
        data["scenarios"] = [_scenario_data(s) for s in self.scenarios]
        data.pop("reference", None)
        data["checks"] = {name: describe_target(t) for name, t in self.config.checks.items()}
        for section in ("comparator", "similarity"):
            if data[section].get("target") is not None:
                data[section]["target"] = describe_target(data[section]["target"])
        return data


def _scenario_data(scenario: ScenarioSpec) -> dict[str, Any]:
    """One question as the resolved config records it (its own check as its ``expect``)."""
    found = {"id": scenario.id, "inputs": dict(scenario.inputs), "reference": scenario.reference}
    if scenario.expect is not None:
        found["expect"] = {"kind": scenario.expect.kind, **scenario.expect.options()}
    return found


def _scenarios(
    config: SweepConfig, base_dir: Path, checks: CheckBuilder
) -> tuple[ScenarioSpec, ...]:
    with judging_heap():  # 10^6 rows are millions of objects: the collector kept re-walking them
        return _scenarios_of(config, base_dir, checks)


def _scenarios_of(
    config: SweepConfig, base_dir: Path, checks: CheckBuilder
) -> tuple[ScenarioSpec, ...]:
    if isinstance(config.scenarios, ScenarioFileConfig):  # data: it may name declared checks only
        declared = load_scenario_file(config.scenarios, base_dir, checks=config.checks)
        fields = [f"scenarios.file item {i + 1} (id)" for i in range(len(declared))]
    else:
        declared = config.resolved_scenarios()
        fields = [f"scenarios[{i}].id" for i in range(len(declared))]
    check_ids([sc.id for sc in declared], fields, "scenario id")
    how = declared_as(config.scenarios)
    checks.load_declared()

    def expect(i: int, sc: ScenarioConfig) -> Comparator | None:
        if sc.expect is None:
            return None
        section = f"{owner_of(i, sc.id, how)}.expect"
        return checks.build(sc.expect, section, trusted=how != "file")

    specs = [
        ScenarioSpec(sc.id, dict(sc.inputs), sc.reference, expect(i, sc))
        for i, sc in enumerate(declared)
    ]
    if not specs:
        msg = "scenarios is empty; remove the key for one default scenario, or list some"
        raise ConfigError(msg, field="scenarios")
    return tuple(specs)


def _runner(
    config: SweepConfig,
    base_dir: Path,
    expanded: ExpandedArms,
    scenarios: tuple[ScenarioSpec, ...],
) -> tuple[RunnerRef, tuple[str, ...]]:
    """The runner to ship, and notes on it; a chat runner is checked against every arm and
    scenario (templates, model, API key) before any run.
    """
    if isinstance(config.runner, ChatRunnerConfig):
        paired = config.statistics.pairing == "seed"
        chat = config.runner
        checked = check_chat(chat, expanded.arms, expanded.origins, scenarios, paired=paired)
        return checked.runner, checked.notes
    if not isinstance(config.runner, str):
        return config.runner, ()
    ref = parse_target(config.runner, base_dir=base_dir, field="runner")
    load_target(ref, field="runner")
    return ref, ()


ArmCheck = Callable[[tuple[ArmSpec, ...], str, tuple[str, ...]], object]


def _resolve(
    config: SweepConfig,
    check: ArmCheck,
    *,
    base_dir: Path,
    source: Path | None,
    overrides: tuple[str, ...],
) -> ResolvedSweep:
    expanded = expand_arms(config)
    baseline = config.baseline_id()
    check(expanded.arms, baseline, expanded.origins)
    checks = CheckBuilder(base_dir, config.checks)
    scenarios = _scenarios(config, base_dir, checks)
    bound_plan(config, len(expanded.arms), len(scenarios))
    comparator = checks.build(config.comparator, "comparator", trusted=True)
    check_references(scenarios, comparator, declared_as(config.scenarios))
    runner, runner_notes = _runner(config, base_dir, expanded, scenarios)
    executor = choose_executor(config.executor, runner)
    sweep = ResolvedSweep(
        config=config,
        arms=expanded.arms,
        baseline=baseline,
        scenarios=scenarios,
        comparator=comparator,
        similarity=build_component(SIMILARITIES, config.similarity, "similarity", base_dir),
        runner=runner,
        base_dir=base_dir,
        executor=executor,
        source=source,
        overrides=overrides,
        skipped=expanded.skipped,
        notes=unknown_facets(expanded.arms, baseline, expanded.origins)
        + unused_settings(config, checks)
        + runner_notes,
    )
    _ = sweep.runner_files  # a pattern that matches nothing is refused now, before any run
    return sweep


def resolve_sweep(
    config: SweepConfig,
    *,
    base_dir: Path,
    source: Path | None = None,
    overrides: tuple[str, ...] = (),
) -> ResolvedSweep:
    """Check everything knowable from the declaration (rule 8) and load every target.

    Raises:
        ConfigError: on any refusal or unloadable target; nothing has run.
    """
    return _resolve(config, check_arms, base_dir=base_dir, source=source, overrides=overrides)


@dataclass(frozen=True)
class ResolvedBisect:
    """A culprit search ready to run: the sweep it belongs to, with its ``bisect:`` section
    present and consistent with the baseline, and the one scenario it searches.
    """

    sweep: ResolvedSweep
    settings: BisectSettings
    """The ``bisect:`` section, resolved (its suspects expanded and checked)."""
    scenario: ScenarioSpec
    base: ArmSpec
    """The baseline arm: every probe ablates suspects on top of it."""


def _bisect_scenario(settings: BisectConfig, scenarios: tuple[ScenarioSpec, ...]) -> ScenarioSpec:
    ids = [s.id for s in scenarios]
    wanted = settings.scenario
    if wanted is None and len(ids) > 1:
        msg = (
            f"the sweep has {len(ids)} scenarios; name one with bisect.scenario ({', '.join(ids)})"
        )
        raise ConfigError(msg, field="bisect.scenario")
    if wanted is not None and wanted not in ids:
        msg = f"scenario {wanted!r} is not declared; known scenarios: {', '.join(ids)}"
        raise ConfigError(msg, field="bisect.scenario")
    return next(s for s in scenarios if wanted in (None, s.id))


def resolve_bisect(
    config: SweepConfig,
    *,
    base_dir: Path,
    source: Path | None = None,
    overrides: tuple[str, ...] = (),
) -> ResolvedBisect:
    """Like :func:`resolve_sweep` for ``counterfact bisect``: the arms need only hold the
    baseline, and the ``bisect:`` section must be present and consistent with it.

    Raises:
        ConfigError: on any refusal or unloadable target; nothing has run.
    """
    settings = config.bisect
    if config.sequential is not None:
        msg = (
            "'counterfact bisect' does not sample sequentially (each probe's seeds are fixed); "
            "remove the 'sequential:' section, or keep it in a separate file for 'counterfact run'"
        )
        raise ConfigError(msg, field="sequential")
    if config.statistics.alternative != "greater":
        msg = (
            "'counterfact bisect' looks for what makes the answer flip: its probes are tested "
            "'greater' only; remove statistics.alternative, or keep it in a separate file for "
            "'counterfact run'"
        )
        raise ConfigError(msg, field="statistics.alternative")
    if settings is None:
        msg = (
            "'counterfact bisect' needs a 'bisect:' section with 'suspects' (ranked ablation "
            "ids); see docs/how-to/bisection.md"
        )
        raise ConfigError(msg, field="bisect")
    sweep = _resolve(
        config,
        lambda arms, baseline, _: check_baseline(arms, baseline),
        base_dir=base_dir,
        source=source,
        overrides=overrides,
    )
    if not settings.suspects:
        msg = "suspects is empty; list the ablation ids to search, likeliest first"
        raise ConfigError(msg, field="bisect.suspects")
    base = sweep.baseline_arm()
    scenario = _bisect_scenario(settings, sweep.scenarios)
    suspects = _chat_suspects(sweep, settings, scenario, base)
    fields = [f"bisect.suspects[{i}]" for i in range(len(suspects))]
    check_not_ablated(suspects, base, fields)
    resolved = BisectSettings.of(settings, suspects)
    return ResolvedBisect(sweep=sweep, settings=resolved, scenario=scenario, base=base)


def _chat_suspects(
    sweep: ResolvedSweep, settings: BisectConfig, scenario: ScenarioSpec, base: ArmSpec
) -> list[str]:
    """The suspects, ``suspects: all`` expanded to the chat request's parts (and named parts
    checked); refused for a runner with no parts to list.
    """
    if not isinstance(sweep.runner, ChatRunner):
        if settings.suspects == "all":
            msg = (
                "suspects: all lists the parts of a chat request, and this runner is not the "
                "chat runner; list the ablation ids your runner applies, likeliest first"
            )
            raise ConfigError(msg, field="bisect.suspects")
        return list(settings.suspects)
    plan = plan_for(sweep.runner.config, nest_facets(base.facets))
    return list(suspect_parts(plan, scenario, settings.suspects, settings.keep))
