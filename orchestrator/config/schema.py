"""The sweep file's schema (YAML or TOML). Every model forbids unknown keys.

This is a contract other tools read; see docs/reference/config.md (generated from it).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import (
    Discriminator,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    Tag,
    ValidationInfo,
    field_validator,
    model_validator,
)

from counterfact.defaults import (
    ADJUST,
    ALPHA,
    ALTERNATIVE,
    COST_KEY,
    FAMILY,
    MAX_CULPRITS,
    MAX_PROBES,
    MAX_SAMPLES,
    OUTPUT_DIR,
    PAIRING,
    SAMPLES,
)
from counterfact.orchestrator.config.components import (
    ComparatorConfig,
    ExecutorConfig,
    SimilarityConfig,
    check_name_problem,
)
from counterfact.orchestrator.config.model import Target, _Model
from counterfact.orchestrator.runners.chatconfig import ChatRunnerConfig


class ArmConfig(_Model):
    """One configuration under test."""

    id: StrictStr
    """Unique, non-blank arm id."""
    facets: dict[StrictStr, Any] = Field(default_factory=dict)
    """What the run manifest must say; nested or dotted keys (both mean the same leaves)."""
    ablations: list[StrictStr] = Field(default_factory=list)
    """Ids of things the runner must remove."""
    restorations: list[StrictStr] = Field(default_factory=list)
    """Ids of things the runner must add back."""
    placebo: StrictBool | Literal["fresh"] = False
    """An A/A arm: reruns the baseline's configuration under its own id (declare nothing else).
    ``fresh``: on fresh seeds (a range no other arm uses, recorded as ``runner_seed``), paired
    with the baseline by seed index: on a seeded program its runs are independent draws of the
    baseline, so its statistical verdict is the false-alarm check of the test on your program.
    ``true``: on the baseline's own seeds, which on a seeded program answers identically — a
    determinism check (a significant or unstable result means the seed does not control the
    program), not a false-alarm rate."""


class ScenarioConfig(_Model):
    """One fixed input the program is rerun on."""

    id: StrictStr
    inputs: dict[StrictStr, Any] = Field(default_factory=dict)
    reference: StrictStr | None = None
    """The answer the real run gave; without it, the baseline's seed-0 output is the reference."""
    expect: ComparatorConfig | None = None
    """This question's own check, instead of the sweep's ``comparator`` (the same kinds and
    options: ``expect: {kind: numeric, tolerance: 0.01}``, ``expect: contains``, ``expect:
    {kind: one-of, options: [A, B, C]}``); default the sweep's ``comparator``. It judges the
    runs, it does not change them: a resume re-judges with a changed ``expect`` and reruns
    nothing. See docs/how-to/per-question-checks.md."""


class ScenarioSample(_Model):
    """A seeded random subset of a scenario file."""

    n: StrictInt = Field(ge=1)
    """How many scenarios to keep (at most the file's)."""
    seed: StrictInt = 0
    """The subset's seed: the same seed keeps the same scenarios."""


class ScenarioFileConfig(_Model):
    """``scenarios: {file: PATH}``: an eval set from JSONL, CSV, Parquet or YAML."""

    file: StrictStr
    """Relative to the sweep file. JSONL: one ``{id, inputs, reference, expect}`` object a line;
    CSV or Parquet: column ``id``, optional ``reference`` and ``expect`` (a kind name or a JSON
    object such as ``{"kind": "numeric", "tolerance": 0.01}``), every other column an input;
    YAML: a list of scenario objects."""
    limit: StrictInt | None = Field(default=None, ge=1)
    """Keep the first N (after ``sample``)."""
    sample: ScenarioSample | None = None
    """Keep a seeded random subset of ``n`` scenarios, in file order."""


class StatisticsConfig(_Model):
    """The ``statistics:`` section: the test beside every tier (rules 14-15)."""

    alpha: StrictFloat = Field(default=ALPHA, gt=0.0, lt=1.0)
    """Significance level, 0 < alpha < 1."""
    adjust: Literal["holm", "bh", "by", "none"] = ADJUST  # type: ignore[assignment]
    """Multiplicity adjustment over the family."""
    family: Literal["sweep", "scenario"] = FAMILY  # type: ignore[assignment]
    """Adjust over every (scenario, challenger) test of the sweep, or per scenario."""
    pairing: Literal["seed", "none"] = PAIRING  # type: ignore[assignment]
    """``seed``: paired exact McNemar test; ``none`` (declare it before running, for runners whose
    seed does not control their randomness): unpaired Fisher exact test."""
    decide: Literal["tiers", "test"] = "tiers"
    """What decides each row's headline ``verdict``. ``tiers`` (default): the seed tiers of rule
    7, where one flip of the baseline makes the arm ``inconclusive (unstable-baseline)``.
    ``test``: the adjusted test — ``confirmed`` when significant, ``not-confirmed`` when not
    significant (and, with ``min_effect``, only when the effect interval rules it out),
    ``inconclusive`` when underpowered. Use ``test`` for any program whose baseline is not
    deterministic. The tier is recorded beside it on every row (``tier_verdict``)."""
    alternative: Literal["greater", "less", "two-sided"] = ALTERNATIVE
    """Which way every test looks: ``greater`` (default): does the arm flip the answer *more*
    often than the baseline (a break); ``less``: *less* often — a fix, with the correct answer as
    the reference; ``two-sided``: either way. The paired and unpaired tests, the pooled test and
    ``decide: test`` and the sequential e-process honour it."""
    min_effect: StrictFloat | None = Field(default=None, gt=0.0, le=1.0)
    """``decide: test``: the smallest flip-rate difference (arm minus baseline) worth finding;
    not significant is then ``not-confirmed`` only when the 95% interval excludes it."""


class SequentialConfig(_Model):
    """The ``sequential:`` section (rule 19): seeds in waves; each arm stops when an
    always-valid test decides, when it no longer can by ``max_samples``, or at that cap.
    ``samples`` is the first wave (and the minimum).
    """

    max_samples: StrictInt = Field(ge=2, le=MAX_SAMPLES)
    """The cap on seeds per arm (at least ``samples``, at most 1,000,000)."""
    wave: StrictInt | None = None
    """Seeds added per round to an undecided arm (at least 1); default ``samples``."""
    min_effect: StrictFloat | None = Field(default=None, gt=0.0, le=1.0, allow_inf_nan=False)
    """The least flip-rate difference (arm minus baseline, in the direction of
    ``statistics.alternative``) worth finding, 0 < d <= 1. An arm also stops as ``futile`` once
    an always-valid test rules out an effect this large (wrongly at most ``alpha`` of the time);
    without it an arm stops as futile only when significance is out of reach by the cap."""

    def wave_size(self, samples: int) -> int:
        """Seeds per round: ``wave``, or ``samples`` when not given."""
        return self.wave or samples

    @field_validator("wave")
    @classmethod
    def _positive_wave(cls, value: int | None) -> int | None:
        if value is not None and value < 1:
            msg = (
                f"wave is the number of seeds added per round and must be at least 1, got "
                f"{value}; omit it to add 'samples' seeds per round"
            )
            raise ValueError(msg)
        return value


class BisectConfig(_Model):
    """The ``bisect:`` section: culprit search over ranked ablation ids (rule 10)."""

    suspects: list[StrictStr] | Literal["all"]
    """Ablation ids, likeliest first; the order only decides the search order. With the chat
    runner, ``all``: every part of what the scenario sends (``runner.parts``) but the question
    (the last paragraph of the last user message) and ``keep``, in the order sent."""
    keep: list[StrictStr] = Field(default_factory=list)
    """With ``suspects: all``: parts never to suspect (beside the question)."""
    rank: Literal["given", "loo", "surrogate"] = "given"
    """How the suspects are ordered before the search (the order decides only how many probes
    it spends, never what it claims): ``given`` as listed; ``loo`` by each one's flip rate
    removed alone (one probe each, all at once); ``surrogate`` by a non-negative linear fit over
    ``rank_probes`` random ablations. Their probes are read back by the search, not rerun."""
    rank_probes: StrictInt = Field(default=32, ge=4, le=1024)
    """``rank: surrogate``: random ablations fitted (each removes every suspect with
    probability 1/2)."""
    max_probes: StrictInt = Field(default=MAX_PROBES, ge=1)
    """Probe budget, the baseline probe included; running out gives ``inconclusive``."""
    max_culprits: StrictInt = Field(default=MAX_CULPRITS, ge=1)
    """Independent culprit sets to search for at most."""
    speculative: StrictBool = False
    """Probe both halves of a split at once (less wall time, more probes spent)."""
    stop_early: StrictBool = False
    """Curtailed probes: each probe but the baseline draws its seeds in waves and stops once
    the seeds not drawn cannot change its decision, whatever they would say; the decision is
    always the one all ``samples`` seeds give, so only the runs spent change (fewer, in more
    rounds). Under ``decide: auto`` only the test's pass is curtailed; the confirmation on
    fresh seeds never is. ``counterfact blame`` turns it on for a sampled call."""
    decide: Literal["auto", "majority", "test"] = "auto"
    """``auto`` (the default): the majority rule (rule 10) while every probe's seeds agree; once
    some probe's seeds split (the program's answers vary by seed), the search is decided again
    by ``test`` (its probes read back, not rerun), so sampling noise is not claimed as a culprit.
    ``majority``: rule 10 always (a split probe then makes the result not sure:
    ``noise-unmeasured``). ``test`` (rule 20, for noisy programs): the baseline must reproduce
    the reference on a majority of seeds, a probe flips when its paired test against the
    baseline is significant at ``statistics.alpha``, and each culprit set is re-confirmed on
    fresh seeds at ``alpha / max_culprits`` before it is claimed."""
    scenario: StrictStr | None = None
    """The scenario to bisect; default the only one."""


GridValue = StrictStr | StrictInt | StrictFloat | bool | None


def _runner_member(value: Any) -> str:
    """A mapping is a built-in runner's section, anything else a target."""
    return "chat" if isinstance(value, dict | ChatRunnerConfig) else "target"


RunnerSpec = Annotated[
    Union[Annotated[ChatRunnerConfig, Tag("chat")], Annotated[Target, Tag("target")]],  # noqa: UP007
    Discriminator(_runner_member),
]
"""``runner:``: a target string (or, from Python, the callable), or a built-in runner's
section such as ``{kind: chat, ...}``."""


class SweepConfig(_Model):
    """A whole sweep file."""

    name: StrictStr = Field(pattern=r"^[A-Za-z0-9._-]+$")
    """Letters, digits, ``.``, ``_`` and ``-``; names the run directory."""
    runner: RunnerSpec
    """``package.module:callable`` or ``path/to/file.py:callable`` (relative to the file), or a
    built-in runner with no Python: ``{kind: chat, prompt: "...{question}..."}`` (one chat
    completion per run against any OpenAI-compatible API; docs/how-to/chat-runner.md)."""
    runner_version: StrictStr | None = None
    """The runner's identity for resume and the run cache; default a hash of its module source
    (for ``kind: chat``, of its settings)."""
    runner_files: list[StrictStr] = Field(default_factory=list)
    """Data files the runner reads (paths or globs, relative to the sweep file): their contents
    join the runner's identity, so an edited corpus or prompt file is a changed runner (the
    resume is refused naming it; the run cache does not serve the old runs)."""
    cache_dir: StrictStr | None = None
    """Opt-in run cache shared across sweeps (relative to the working directory)."""
    samples: StrictInt = SAMPLES
    """Seeded reruns per (scenario, arm); at least 2 (rule 1)."""
    baseline: StrictStr | None = None
    """Baseline arm id; default the first arm."""
    arms: list[ArmConfig] = Field(default_factory=list)
    """Declared arms; without any, a baseline ``baseline`` that declares nothing is used."""
    ablate_each: list[StrictStr] = Field(default_factory=list)
    """One leave-one-out arm per id (``without:<id>``), beside the baseline."""
    grid: dict[StrictStr, list[GridValue]] = Field(default_factory=dict)
    """``{facet.path: [values]}``: one arm per combination, ids like ``model=large,k=3``."""
    cost_key: StrictStr = COST_KEY
    """The cost key rule 11 judges (consistency, placebo band, cost cause)."""
    statistics: StatisticsConfig = Field(default_factory=StatisticsConfig)
    """The test beside every tier; see docs/explanation/verdicts.md."""
    sequential: SequentialConfig | None = None
    """Add seeds in waves until each arm is decided (``counterfact run`` only); see
    docs/how-to/sequential.md."""
    bisect: BisectConfig | None = None
    """Settings for ``counterfact bisect``; ignored by ``run``."""
    scenarios: list[ScenarioConfig] | ScenarioFileConfig | None = None
    """A list of scenarios, or ``{file: PATH}`` to read them from a file (JSONL, CSV, Parquet,
    YAML; see docs/reference/sweep-file.md). Default: one scenario ``default`` with empty
    inputs."""
    reference: StrictStr | None = None
    """Shorthand for the single default scenario's reference."""
    comparator: ComparatorConfig = Field(default_factory=ComparatorConfig)
    """How a flip is decided: the check of every question without its own ``expect``."""
    checks: dict[StrictStr, Target] = Field(default_factory=dict)
    """Named custom checks, ``{name: module:callable or file.py:callable}``: the only code a
    question may ask for. A question file is data and never names a callable itself; its
    ``expect: {kind: custom, target: NAME}`` (or just ``expect: NAME``) picks one of these by
    name. Each is ``callable(reference, output) -> bool`` (True means flipped), imported once
    when the sweep is resolved. See docs/explanation/what-runs-code.md."""
    similarity: SimilarityConfig = Field(default_factory=SimilarityConfig)
    executor: ExecutorConfig = Field(default_factory=ExecutorConfig)
    budget: dict[StrictStr, StrictFloat | StrictInt] = Field(default_factory=dict)
    """Spend limits over the ``cost`` runners report, e.g. ``{usd: 20}``, and ``runs``: model
    calls (each run's attempts, not a cost key): scheduling stops before recorded spend plus the
    runs in flight would pass a limit (exit 4); raise it and run again to continue. Not part of
    what a run directory means: a resume may change it."""
    output_dir: StrictStr = OUTPUT_DIR
    """Runs are written to ``<output_dir>/<name>/`` (``--out`` overrides)."""

    @model_validator(mode="before")
    @classmethod
    def _named_checks(cls, data: Any) -> Any:
        """An inline question's ``expect: NAME`` naming a declared check means that check."""
        if not isinstance(data, dict) or not isinstance(data.get("checks"), dict):
            return data
        names, scenarios = data["checks"], data.get("scenarios")
        if not isinstance(scenarios, list):
            return data
        named = [
            sc | {"expect": {"kind": "custom", "target": sc["expect"]}}
            if isinstance(sc, dict) and isinstance(sc.get("expect"), str) and sc["expect"] in names
            else sc
            for sc in scenarios
        ]
        return data | {"scenarios": named}

    @field_validator("runner", mode="before")
    @classmethod
    def _runner_form(cls, value: Any) -> Any:
        if isinstance(value, str | dict | ChatRunnerConfig) or callable(value):
            return value
        msg = (
            f"runner must be a target ('package.module:callable' or 'path/to/file.py:callable') "
            f"or a built-in runner ({{kind: chat, prompt: ...}}), got {type(value).__name__}"
        )
        raise ValueError(msg)

    @field_validator("scenarios", mode="before")
    @classmethod
    def _scenarios_form(cls, value: Any) -> Any:
        if isinstance(value, str):  # a file named bare: say how to read it, not the union's misses
            msg = (
                f"scenarios is the text {value!r}: write a list of scenarios, or "
                f"{{file: {value}}} to read them from a file (JSONL, CSV, Parquet or YAML)"
            )
            raise ValueError(msg)
        return value

    @field_validator("checks")
    @classmethod
    def _check_names(cls, value: dict[str, Any]) -> dict[str, Any]:
        for name, target in value.items():
            problem = check_name_problem(name)
            if problem is not None:
                raise ValueError(problem)
            if isinstance(target, str) and ":" not in target:
                msg = (
                    f"the check {name!r} is {target!r}, not a target; write "
                    "'package.module:callable' or 'path/to/file.py:callable'"
                )
                raise ValueError(msg)
        return value

    @field_validator("budget")
    @classmethod
    def _positive_limits(cls, value: dict[str, float]) -> dict[str, float]:
        for key, limit in value.items():
            if not limit > 0 or limit != limit or limit == float("inf"):
                msg = (
                    f"budget.{key} must be a positive finite number (the most to spend on "
                    f"cost key {key!r}), got {limit!r}"
                )
                raise ValueError(msg)
        return value

    @field_validator("samples")
    @classmethod
    def _at_least_two(cls, value: int) -> int:
        if value < 2:
            msg = (
                f"samples must be at least 2 (rule 1: never a single-run verdict), got "
                f"{value}; set samples: {SAMPLES} (the default) or more"
            )
            raise ValueError(msg)
        if value > MAX_SAMPLES:
            msg = (
                f"samples must be at most {MAX_SAMPLES:,} seeds per (scenario, arm), got "
                f"{value:,}; for an open-ended count use sequential.max_samples"
            )
            raise ValueError(msg)
        return value

    @field_validator("name")
    @classmethod
    def _not_a_path_step(cls, value: str) -> str:
        if value.strip(".") == "":
            msg = (
                f"name {value!r} would name the output folder itself or its parent; use a name "
                "with a letter or digit, e.g. my-sweep"
            )
            raise ValueError(msg)
        return value

    @field_validator("sequential")
    @classmethod
    def _cap_covers_first_wave(
        cls, seq: SequentialConfig | None, info: ValidationInfo
    ) -> SequentialConfig | None:
        samples = info.data.get("samples")
        if seq is not None and isinstance(samples, int) and seq.max_samples < samples:
            msg = (
                f"max_samples ({seq.max_samples}) is below samples ({samples}), the first "
                f"wave; raise sequential.max_samples to at least {samples}"
            )
            raise ValueError(msg)
        return seq

    @model_validator(mode="after")
    def _reference_shorthand(self) -> SweepConfig:
        if self.reference is not None and self.scenarios is not None:
            msg = (
                "top-level 'reference' is shorthand for the single default scenario; with "
                "'scenarios', give each scenario its own 'reference' instead"
            )
            raise ValueError(msg)
        return self

    def resolved_scenarios(self) -> list[ScenarioConfig]:
        """The inline scenarios, with the single-scenario default applied (a scenario file is
        read by the resolver, which knows the sweep file's folder).
        """
        if isinstance(self.scenarios, ScenarioFileConfig):
            msg = "a scenario file is read when the sweep is resolved (resolve_sweep)"
            raise TypeError(msg)
        if self.scenarios is not None:
            return list(self.scenarios)
        return [ScenarioConfig(id="default", inputs={}, reference=self.reference)]

    def baseline_id(self) -> str:
        """The baseline arm id (default: the first arm's, or ``baseline`` with no arms)."""
        if self.baseline is not None:
            return self.baseline
        return self.arms[0].id if self.arms else "baseline"
