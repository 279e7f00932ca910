"""counterfact: seeded counterfactual reruns that prove which change made an answer differ.

The public API. Everything else lives in ``counterfact.probes`` (what one probe measures),
``counterfact.verdicts`` (what the evidence licenses) and ``counterfact.orchestrator`` (how runs
happen).
"""

from __future__ import annotations

from counterfact.exceptions import (
    ConfigError,
    CounterfactError,
    CounterfactWarning,
    DegenerateBandWarning,
    ExecutorError,
    RefusalError,
    ResumeConflictError,
    RunDirectoryError,
    RunnerImportError,
    RunnerReturnError,
    ScoringError,
    SweepInterrupted,
)
from counterfact.orchestrator.api import compare_arms, find_culprits
from counterfact.orchestrator.bisect import BisectResult, run_bisect
from counterfact.orchestrator.config import SweepConfig
from counterfact.orchestrator.loading import load_sweep
from counterfact.orchestrator.sweep import SweepResult, run_sweep
from counterfact.orchestrator.version import package_version
from counterfact.probes.ablation import apply_ablations
from counterfact.probes.records import RunRecord
from counterfact.probes.runner import ArmView, RunContext, RunResult, ScenarioView
from counterfact.verdicts.records import BisectRecord, SweepSummary, VerdictRecord

__version__ = package_version()

__all__ = [
    "ArmView",
    "BisectRecord",
    "BisectResult",
    "ConfigError",
    "CounterfactError",
    "CounterfactWarning",
    "DegenerateBandWarning",
    "ExecutorError",
    "RefusalError",
    "ResumeConflictError",
    "RunContext",
    "RunDirectoryError",
    "RunRecord",
    "RunResult",
    "RunnerImportError",
    "RunnerReturnError",
    "ScenarioView",
    "ScoringError",
    "SweepConfig",
    "SweepInterrupted",
    "SweepResult",
    "SweepSummary",
    "VerdictRecord",
    "__version__",
    "apply_ablations",
    "compare_arms",
    "find_culprits",
    "load_sweep",
    "run_bisect",
    "run_sweep",
]
