"""``counterfact plan --json``: how many samples a sweep needs, from a pilot run directory."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

PLAN_SCHEMA_VERSION: Literal[1] = 1


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
    """Estimated wall time at ``runs``: ``ceil(runs / concurrency)`` waves, each the pilot's mean
    run time (a sequential sweep, which runs a wave at a time, may take longer)."""
    scenarios: list[ScenarioPlan]
    note: str | None = None
    """Why a figure is missing or weaker than it looks."""


class PlanRecord(_Record):
    """The whole plan."""

    schema_version: Literal[1] = PLAN_SCHEMA_VERSION
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
    """``given``: ``--concurrency``; ``configured``: the sweep's ``executor.concurrency``;
    ``measured``: the pilot's run time summed over its wall time (without either)."""
    concurrency_measured: float | None = None
    """What the pilot achieved (its run time summed over its wall time), whichever is used."""
    challengers: list[ChallengerPlan]
    notes: list[str] = Field(default_factory=list)
    """What the figures are when they are not samples per arm (a sequential pilot)."""
