"""Pin the public API: adding or removing a name is a deliberate change."""

from __future__ import annotations

import counterfact


def test_all_is_sorted_and_exact() -> None:
    assert counterfact.__all__ == sorted(counterfact.__all__)
    assert counterfact.__all__ == [
        "ArmView",
        "ConfigError",
        "CounterfactError",
        "CounterfactWarning",
        "DegenerateBandWarning",
        "ExecutorError",
        "RefusalError",
        "RunContext",
        "RunDirectoryError",
        "RunRecord",
        "RunResult",
        "RunnerImportError",
        "RunnerReturnError",
        "ScenarioView",
        "ScoringError",
        "SweepConfig",
        "SweepResult",
        "SweepSummary",
        "VerdictRecord",
        "__version__",
        "compare_arms",
        "load_sweep",
        "run_sweep",
    ]
    for name in counterfact.__all__:
        assert hasattr(counterfact, name), name
