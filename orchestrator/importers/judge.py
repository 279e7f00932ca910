"""Judge imported Inspect AI logs with the ordinary engine: a sweep whose runner replays them.

Each log is an arm declaring ``{task, model, log}`` as facets, and each replayed run reports the
same as its manifest, so the manifest check confirms every arm is the log it names. The
runner's identity is the logs' digest: importing into a directory that holds another import of
changed logs is refused, as any changed runner is. Everything downstream — tiers, paired tests,
the family adjustment, pooled results, standing, ``report.html``, exports — is what
``counterfact run`` produces.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from counterfact.exceptions import ConfigError, ImportedRunError
from counterfact.orchestrator.drivers.api import compare_arms
from counterfact.orchestrator.drivers.sweep import SweepResult
from counterfact.orchestrator.importers.inspect_logs import CORRECT_VALUES, ImportedArm
from counterfact.probes.runner import RunContext, RunResult

PATTERN = r"^(correct|incorrect):"
"""The regex comparator's pattern in score mode: the run's first word."""


def _norm(value: Any) -> Any:
    """A score value compared by meaning: numbers by value (``1`` is ``1.0`` is ``true``), text
    without case (``C`` is ``c``, ``true`` is ``True``).
    """
    if isinstance(value, bool | int | float):
        return float(value)
    text = str(value).strip()
    lowered = text.lower()
    if lowered in ("true", "false"):
        return 1.0 if lowered == "true" else 0.0
    try:
        return float(text)
    except ValueError:
        return lowered


def _is_correct(value: Any, correct: Sequence[Any]) -> bool:
    return _norm(value) in {_norm(c) for c in correct}


class Replay:
    """The runner: each (arm, sample, epoch) answers as its log recorded."""

    def __init__(
        self, arms: Sequence[ImportedArm], flip_on: str, correct: Sequence[Any] = CORRECT_VALUES
    ) -> None:
        self.arms = {a.name: a for a in arms}
        self.flip_on = flip_on
        self.correct = tuple(correct)

    def __call__(self, ctx: RunContext) -> RunResult:
        """The logged run of this (arm, scenario, seed): seed ``s`` is epoch ``s + 1``."""
        arm = self.arms[ctx.arm.id]
        run = arm.runs[(ctx.scenario.id, ctx.seed + 1)]
        if run.error is not None:
            raise ImportedRunError(f"the sample failed in {arm.path.name}: {run.error}")
        manifest = {"task": arm.task, "model": arm.model, "log": arm.name}
        output = run.completion
        if self.flip_on == "score":
            if run.score is None:
                raise ImportedRunError(f"the sample has no score in {arm.path.name}")
            word = "correct" if _is_correct(run.score, self.correct) else "incorrect"
            output = f"{word}: {run.completion}"
        return RunResult(output=output, manifest=manifest, cost={"seconds": run.duration_s})


def judge_logs(
    arms: Sequence[ImportedArm],
    *,
    baseline: str,
    out: Path,
    flip_on: str = "score",
    comparator: str | None = None,
    correct: Sequence[Any] = CORRECT_VALUES,
    statistics: Mapping[str, Any] | None = None,
    fresh: bool = False,
) -> SweepResult:
    """Judge the logs (already checked pairable) into the run directory ``out``.

    Raises:
        ConfigError: ``baseline`` names no log.
    """
    names = [a.name for a in arms]
    if baseline not in names:
        msg = f"no log is named {baseline!r}; the arms are {', '.join(names)}"
        raise ConfigError(msg, field="--baseline")
    ordered = sorted(arms, key=lambda a: a.name != baseline)
    first = ordered[0]
    epochs = sorted({e for (_, e) in first.runs})
    scenarios = [
        {
            "id": sid,
            "inputs": {"input": first.inputs[sid]},
            "reference": f"correct: {first.targets[sid]}"
            if flip_on == "score"
            else first.targets[sid],
        }
        for sid in sorted(first.targets)
    ]
    version = hashlib.sha256("".join(a.digest for a in ordered).encode()).hexdigest()[:16]
    return compare_arms(
        [
            {"id": a.name, "facets": {"task": a.task, "model": a.model, "log": a.name}}
            for a in ordered
        ],
        Replay(ordered, flip_on, correct),
        samples=len(epochs),
        scenarios=scenarios,
        comparator={"kind": "regex", "pattern": PATTERN}
        if flip_on == "score"
        else (comparator or "exact"),
        executor="local",
        name="inspect-import",
        out=out,
        fresh=fresh,
        runner_version=f"inspect-logs:{version}",
        statistics=statistics,
    )
