"""counterfact: seeded counterfactual reruns that prove which change made an answer differ.

The public API. Everything else lives in ``counterfact.probes`` (what one probe measures),
``counterfact.verdicts`` (what the evidence licenses) and ``counterfact.orchestrator`` (how runs
happen).

Names are imported on first use (PEP 562), so ``import counterfact`` and ``counterfact --version``
stay fast: Ray, scipy and the engine load only when something needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from counterfact.exceptions import (
        BudgetExhausted,
        CodeInDataError,
        ConfigError,
        CounterfactError,
        CounterfactWarning,
        DegenerateBandWarning,
        ExecutorError,
        RateLimited,
        RecordWriteError,
        RefusalError,
        ResumeConflictError,
        RunDirectoryError,
        RunnerImportError,
        RunnerReturnError,
        RunsFailed,
        ScoringError,
        SweepInterrupted,
    )
    from counterfact.orchestrator.config.loading import (
        load_bisect,
        load_sweep,
    )
    from counterfact.orchestrator.config.schema import (
        SweepConfig,
    )
    from counterfact.orchestrator.drivers.api import (
        compare_arms,
        find_culprits,
    )
    from counterfact.orchestrator.drivers.bisect import (
        BisectResult,
        run_bisect,
    )
    from counterfact.orchestrator.drivers.outputs.export import (
        load_arms,
        load_probes,
        load_runs,
        load_verdicts,
    )
    from counterfact.orchestrator.drivers.provenance import (
        package_version,
    )
    from counterfact.orchestrator.drivers.sweep import (
        SweepResult,
        run_sweep,
    )
    from counterfact.probes.ablation import (
        apply_ablations,
    )
    from counterfact.probes.runner import (
        ArmView,
        RunContext,
        Runner,
        RunResult,
        ScenarioView,
    )
    from counterfact.records.arms import ArmVerdictRecord
    from counterfact.records.bisect import BisectRecord
    from counterfact.records.runs import RunRecord
    from counterfact.records.summary import SweepSummary
    from counterfact.records.verdicts import VerdictRecord

_WHERE: dict[str, str] = {
    "BudgetExhausted": "counterfact.exceptions",
    "CodeInDataError": "counterfact.exceptions",
    "ConfigError": "counterfact.exceptions",
    "CounterfactError": "counterfact.exceptions",
    "CounterfactWarning": "counterfact.exceptions",
    "DegenerateBandWarning": "counterfact.exceptions",
    "ExecutorError": "counterfact.exceptions",
    "RateLimited": "counterfact.exceptions",
    "RecordWriteError": "counterfact.exceptions",
    "RefusalError": "counterfact.exceptions",
    "ResumeConflictError": "counterfact.exceptions",
    "RunDirectoryError": "counterfact.exceptions",
    "RunnerImportError": "counterfact.exceptions",
    "RunnerReturnError": "counterfact.exceptions",
    "ScoringError": "counterfact.exceptions",
    "SweepInterrupted": "counterfact.exceptions",
    "RunsFailed": "counterfact.exceptions",
    "load_arms": "counterfact.orchestrator.drivers.outputs.export",
    "load_probes": "counterfact.orchestrator.drivers.outputs.export",
    "load_runs": "counterfact.orchestrator.drivers.outputs.export",
    "load_verdicts": "counterfact.orchestrator.drivers.outputs.export",
    "compare_arms": "counterfact.orchestrator.drivers.api",
    "find_culprits": "counterfact.orchestrator.drivers.api",
    "BisectResult": "counterfact.orchestrator.drivers.bisect",
    "run_bisect": "counterfact.orchestrator.drivers.bisect",
    "SweepConfig": "counterfact.orchestrator.config.schema",
    "load_bisect": "counterfact.orchestrator.config.loading",
    "load_sweep": "counterfact.orchestrator.config.loading",
    "SweepResult": "counterfact.orchestrator.drivers.sweep",
    "run_sweep": "counterfact.orchestrator.drivers.sweep",
    "package_version": "counterfact.orchestrator.drivers.provenance",
    "apply_ablations": "counterfact.probes.ablation",
    "RunRecord": "counterfact.records.runs",
    "ArmView": "counterfact.probes.runner",
    "RunContext": "counterfact.probes.runner",
    "RunResult": "counterfact.probes.runner",
    "Runner": "counterfact.probes.runner",
    "ScenarioView": "counterfact.probes.runner",
    "ArmVerdictRecord": "counterfact.records.arms",
    "BisectRecord": "counterfact.records.bisect",
    "SweepSummary": "counterfact.records.summary",
    "VerdictRecord": "counterfact.records.verdicts",
}


_SUBMODULES = frozenset(
    {"defaults", "exceptions", "orchestrator", "probes", "records", "testing", "verdicts"}
)


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from counterfact.orchestrator.drivers.provenance import package_version

        return package_version()
    module = _WHERE.get(name)
    if module is None:
        if name in _SUBMODULES:  # counterfact.probes etc., as an attribute after import
            return importlib.import_module(f"counterfact.{name}")
        msg = f"module 'counterfact' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*__all__, *_SUBMODULES})


__all__ = [
    "ArmVerdictRecord",
    "ArmView",
    "BisectRecord",
    "BisectResult",
    "BudgetExhausted",
    "CodeInDataError",
    "ConfigError",
    "CounterfactError",
    "CounterfactWarning",
    "DegenerateBandWarning",
    "ExecutorError",
    "RateLimited",
    "RecordWriteError",
    "RefusalError",
    "ResumeConflictError",
    "RunContext",
    "RunDirectoryError",
    "RunRecord",
    "RunResult",
    "Runner",
    "RunnerImportError",
    "RunnerReturnError",
    "RunsFailed",
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
    "load_arms",
    "load_bisect",
    "load_probes",
    "load_runs",
    "load_sweep",
    "load_verdicts",
    "package_version",
    "run_bisect",
    "run_sweep",
]
