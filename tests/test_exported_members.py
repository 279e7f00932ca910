"""Pin the public API: adding or removing a name is a deliberate change."""

from __future__ import annotations

import counterfact


def test_all_is_sorted_and_exact() -> None:
    assert counterfact.__all__ == sorted(counterfact.__all__)
    assert counterfact.__all__ == [
        "ArmView",
        "BisectRecord",
        "BisectResult",
        "BudgetExhausted",
        "ConfigError",
        "CounterfactError",
        "CounterfactWarning",
        "DegenerateBandWarning",
        "ExecutorError",
        "RateLimited",
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
        "load_bisect",
        "load_probes",
        "load_runs",
        "load_sweep",
        "load_verdicts",
        "package_version",
        "run_bisect",
        "run_sweep",
    ]
    for name in counterfact.__all__:
        assert hasattr(counterfact, name), name


def test_subpackages_are_attributes_too() -> None:
    # The lazy __getattr__ must not hide counterfact.probes and friends.
    assert counterfact.probes.__name__ == "counterfact.probes"
    assert counterfact.defaults.SAMPLES == 3
    assert {"probes", "verdicts", "orchestrator"} <= set(dir(counterfact))
