"""A small sweep for the gate tests (counterfact.testing and its pytest plugin): one arm that
changes the answer on every seed, one that changes nothing, on the in-process executor.
"""

from __future__ import annotations

from pathlib import Path

RUNNER = """\
from counterfact import RunResult


def run(ctx):
    model = ctx.arm.facets["model"]
    answer = "Lyon" if model == "broken" else "Paris"
    return RunResult(output=answer, manifest={"model": model}, cost={"tokens": 10})
"""


def sweep_text(
    *, arms: tuple[str, ...] = ("small", "large", "broken"), samples: int = 4, extra: str = ""
) -> str:
    """The sweep file: the first model is the baseline, each other model an arm of its name;
    ``extra`` lines are appended (every run costs 10 tokens, for a ``budget``).
    """
    lines = [
        "name: gate",
        "runner: gate_runner.py:run",
        f"samples: {samples}",
        "reference: Paris",
        "comparator: {kind: exact}",
        "executor: {kind: local}",
        "arms:",
    ]
    lines += [f"  - {{id: {m}, facets: {{model: {m}}}}}" for m in arms]
    return "\n".join(lines) + "\n" + extra


def write_gate_sweep(folder: Path, **kwargs: object) -> Path:
    """The runner and the sweep file in ``folder``; the sweep file's path."""
    (folder / "gate_runner.py").write_text(RUNNER, encoding="utf-8")
    path = folder / "gate.yaml"
    path.write_text(sweep_text(**kwargs), encoding="utf-8")  # type: ignore[arg-type]
    return path
