"""``counterfact plan --json``: how many samples a sweep needs, from a pilot run directory."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

PLAN_SCHEMA_VERSION: Literal[4] = 4


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ScenarioPlan(_Record):
    """One scenario's test for a challenger: its cell rates and the samples its own test needs."""

    scenario: str
    p10: float
    """Share of seed pairs where the arm flipped and the baseline held (the pilot's, or with
    ``--effect`` for a paired or sequential plan; an unpaired plan carries its effect in
    ``p_arm``)."""
    p01: float
    """Share of seed pairs where the baseline flipped and the arm held."""
    p_arm: float | None = None
    """``pairing: none``: the arm's flip rate the unpaired plan used (pilot, or with
    ``--effect``); null for a paired plan."""
    p_base: float | None = None
    """``pairing: none``: the baseline's flip rate the unpaired plan used."""
    samples: int | None
    """Samples per arm at which this scenario's own test reaches the power asked for, at its
    family's per-test level (a sequential plan: the ``max_samples`` at which its e-process does);
    null when it does not by the search cap (no effect the test's way)."""
    power: float | None
    """The power at ``samples`` (exact; simulated for a sequential plan)."""
    expected_samples: float | None = None
    """A sequential plan: the mean seeds this scenario's arm used before it stopped, at the
    challenger's recommended ``max_samples`` (simulated); null for a fixed-sample plan."""


class WallTimeRecord(_Record):
    """The parts of a wall-time estimate (``counterfact.verdicts.planning.estimate``)."""

    runs_s: float
    """The runs: ``runs / min(in_flight / run_s, requests_per_minute / 60)``."""
    startup_s: float = 0.0
    """Before the first run, as the pilot took (its executor's start: Ray's, when it uses Ray)."""
    process_startup_s: float = 0.0
    """The command's start-up before that (interpreter and imports), as ``plan`` measured its
    own (0: not measured, as from the Python API)."""
    judging_s: float | None = None
    """Judging and report after the last run: the pilot's, scaled by questions x arms (null:
    not measured)."""
    rate_bound: bool = False
    """The rate limit, not the runs in flight, sets the pace."""


class EvalSetPoint(_Record):
    """The fewest questions reaching the power at one seed count (simulated)."""

    seeds: int
    """Samples per arm on each question."""
    questions: int | None
    """Null: not by the search cap (100,000 questions)."""
    power: float | None
    power_se: float | None = None


class EvalSetPlan(_Record):
    """How many questions and seeds each the arm-level test needs for one challenger."""

    questions: int | None
    """Questions the plan recommends (null: out of reach by the cap)."""
    seeds: int | None
    """Samples per arm on each question."""
    power: float | None
    """The simulated power of the arm-level test at (``questions``, ``seeds``)."""
    power_se: float | None
    method: str
    sweeps: int
    """Simulated sweeps per grid point."""
    rng_seed: int
    """The simulation's fixed seed."""
    pilot_questions: int
    """The pilot's tested questions the simulation resamples."""
    seeds_vary: bool
    """Some pilot question's outcomes varied across its seeds."""
    seeds_add_nothing: bool
    """The simulation's seeds repeat each question's outcome: more seeds add nothing, only more
    questions help; ``seeds`` is then the fewest a sweep takes."""
    grid: list[EvalSetPoint] = Field(default_factory=list)
    """Per seed count simulated, the fewest questions reaching the power."""
    runs: int | None = None
    """Runs at the recommendation: questions x seeds x arms."""
    cost: dict[str, float] = Field(default_factory=dict)
    wall_s: float | None = None
    wall: WallTimeRecord | None = None
    note: str | None = None
    effect: float | None = None
    """The effect ``power`` is for (arm minus baseline flip rate): ``--effect`` (negative under
    ``less``), or without it the end of the pilot's arm-level interval nearer 0, not the pilot's
    estimate, which leans high once the noise guard lets it through (issue 43); null when
    nothing was planned, or in a plan before schema 4."""


class PilotEffectRecord(_Record):
    """A challenger's arm-level effect in the pilot (arm minus baseline flip rate) and its
    interval: the sign-flip score interval over questions (one question: the row's Newcombe
    interval), at the level the verdicts print.
    """

    diff: float
    low: float
    high: float
    level: float


class ChallengerPlan(_Record):
    """What one challenger needs."""

    arm: str
    samples: int | None
    """Samples per arm the plan recommends: the pooled test's need with several scenarios, the
    scenario's own test with one; under ``pairing: none`` (no pooled test) the most any
    scenario within reach needs; a sequential pilot's plan gives the ``max_samples`` to set (the
    most any scenario within reach needs). Null when the power asked for is out of reach."""
    power: float | None
    """The power at ``samples``."""
    power_method: str
    """How the power was computed (exact enumeration, or simulation with its error)."""
    power_se: float | None
    """Standard error of a simulated power; null when it is exact."""
    runs: int | None
    """Runs the whole sweep takes at ``samples``: samples x scenarios x arms (a sequential
    plan: at most that; the scenarios' ``expected_samples`` say how much less)."""
    cost: dict[str, float]
    """Estimated spend per cost key at ``runs`` (the pilot's mean per run, times runs)."""
    wall_s: float | None
    """Estimated wall time at ``runs``: start-up, the runs (``runs / min(concurrency /
    run_s_mean, requests_per_minute / 60)``) and judging and report, as in ``wall`` (a
    sequential sweep, which runs a wave at a time, may take longer)."""
    scenarios: list[ScenarioPlan]
    note: str | None = None
    """Why a figure is missing or weaker than it looks."""
    wall: WallTimeRecord | None = None
    """The parts of ``wall_s``."""
    eval_set: EvalSetPlan | None = None
    """With several questions: questions and seeds each for the arm-level test (the headline
    verdict); null for a one-question, sequential or unpaired pilot."""
    pilot_effect: PilotEffectRecord | None = None
    """The effect the pilot saw for this challenger (null: no tested question)."""
    withheld: Literal["placebo", "noise", "other-direction"] | None = None
    """Why no power target was planned (``note`` says it in words): ``placebo`` (a placebo arm
    is the false-alarm or determinism check), ``noise`` (no ``--effect`` and the pilot's effect
    interval includes 0: a plan for it would plan to detect noise), ``other-direction`` (no
    ``--effect`` and the interval lies wholly the other way from the test's direction)."""


class PlanRecord(_Record):
    """The whole plan."""

    schema_version: Literal[1, 2, 3, 4] = PLAN_SCHEMA_VERSION
    """2: ``eval_set`` per challenger, ``wall`` parts, the rate limit and the configured
    concurrency beside the one used; 3: ``pilot_effect`` and ``withheld`` per challenger and the
    measured ``process_startup_s``; 4: the eval-set plan's ``effect`` (without ``--effect``, the
    pilot's bound, not its estimate) (older versions read as is: every new field has a
    default)."""
    run_dir: str
    name: str
    power_target: float
    effect: float | None
    """``--effect``: the flip-rate difference planned for; null: the pilot's observed rates."""
    alpha: float
    adjust: str
    alternative: str
    sequential: bool = False
    """The pilot is sequential: ``samples`` are the ``max_samples`` its e-process needs."""
    pairing: Literal["seed", "none"] = "seed"
    """The sweep's pairing: ``seed`` plans the paired exact test (pooled over scenarios when
    there are several), ``none`` Fisher's unpaired test per scenario; a sequential pilot
    (``sequential``) is planned with its e-process whatever its pairing."""
    family_size: int
    """Tests in a per-scenario test's family (the per-test level is ``alpha`` over it for Holm
    and BH)."""
    pilot_samples: int
    scenarios: int
    arms: int
    """Arms, the baseline included."""
    run_s_mean: float | None
    """The pilot's mean run time, seconds."""
    concurrency: float
    """Runs in flight at once the wall time assumes."""
    concurrency_source: Literal["measured", "given", "configured"]
    """``given``: ``--concurrency``; ``measured``: what the pilot achieved (its run time summed
    over its runs' wall time); ``configured`` (version 1 only): ``executor.concurrency``."""
    concurrency_configured: float | None = None
    """The sweep's ``executor.concurrency`` when set (a ceiling; the estimate uses what the
    pilot achieved)."""
    requests_per_minute: float | None = None
    """``executor.rate_limit.requests_per_minute`` when set: it bounds the runs' pace."""
    startup_s: float | None = None
    """The pilot's time from its start to its first run."""
    process_startup_s: float | None = None
    """The ``plan`` command's own start-up (its process's age when it began planning: the
    interpreter and its imports), added to each wall time as the sweep's command will pay it
    too (null: not measured, as from the Python API: then left out of the wall time)."""
    judging_s: float | None = None
    """The pilot's time from its last run to its summary (judging and report)."""
    concurrency_measured: float | None = None
    """What the pilot achieved (its run time summed over its wall time), whichever is used."""
    challengers: list[ChallengerPlan]
    notes: list[str] = Field(default_factory=list)
    """What the figures are when they are not samples per arm (a sequential pilot)."""
