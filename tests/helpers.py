"""What many tests share: the CLI run in-process, and a run record made to order."""

from __future__ import annotations

from click.testing import CliRunner

from counterfact.orchestrator.cli import main
from counterfact.records import RunError, RunRecord


def invoke(*args: str) -> tuple[int, str, str]:
    """Run ``counterfact ARGS`` in this process: (exit code, stdout, stderr)."""
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def run_record(
    seed: int,
    arm: str = "a",
    *,
    scenario: str = "s",
    output: str | None = None,
    cost: dict[str, float] | None = None,
    error: tuple[str, str] | None = None,
    from_cache: bool = False,
) -> RunRecord:
    """A finished run: output ``out <seed>`` unless given; ``error=(type, message)`` fails it."""
    failed = RunError(type=error[0], message=error[1]) if error is not None else None
    return RunRecord(
        scenario=scenario,
        arm=arm,
        seed=seed,
        output=None if failed else (output if output is not None else f"out {seed}"),
        manifest=None,
        cost=cost,
        error=failed,
        duration_s=0.0,
        finished_at="2026-11-30T00:00:00.000+00:00",
        from_cache=from_cache,
    )


def after_standing(claim: str) -> str:
    """A claim without its first sentence (the standing, rule 25)."""
    first, _, rest = claim.partition(". ")
    assert first.startswith(("Sure", "Not sure", "Not assessed")), claim
    return rest
