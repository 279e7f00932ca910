"""Pin the public API: adding or removing a name is a deliberate change."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import counterfact
import counterfact.records


def test_all_is_sorted_and_exact() -> None:
    assert counterfact.__all__ == sorted(counterfact.__all__)
    assert counterfact.__all__ == [
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
    for name in counterfact.__all__:
        assert hasattr(counterfact, name), name


def test_subpackages_are_attributes_too() -> None:
    # The lazy __getattr__ must not hide counterfact.probes and friends.
    assert counterfact.probes.__name__ == "counterfact.probes"
    assert counterfact.defaults.SAMPLES == 3
    assert {"probes", "verdicts", "orchestrator"} <= set(dir(counterfact))


def _type_checking_imports(path: Path) -> set[tuple[str, str]]:
    """(module, name) of every import under the facade's ``if TYPE_CHECKING:``."""
    found: set[tuple[str, str]] = set()
    for top in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(top, ast.If) and ast.unparse(top.test) == "TYPE_CHECKING":
            for node in ast.walk(top):
                if isinstance(node, ast.ImportFrom) and node.module:
                    found.update((node.module, alias.name) for alias in node.names)
    return found


def test_the_facade_lists_are_one_list() -> None:
    # The public names are written in three places for three readers (type checkers read the
    # TYPE_CHECKING imports and the literal __all__, the PEP 562 loader reads _WHERE); they
    # must say the same thing, each name at the module that defines it.
    where = counterfact._WHERE
    assert counterfact.__all__ == sorted([*where, "__version__"])
    assert _type_checking_imports(Path(counterfact.__file__)) == {
        (module, name) for name, module in where.items()
    }
    for name, module in where.items():
        value = getattr(importlib.import_module(module), name)
        if isinstance(value, type) or callable(value):
            assert value.__module__ == module, f"{name} is defined in {value.__module__}"


def test_the_records_facade_exports_what_it_imports() -> None:
    # counterfact.records re-exports its submodules' names, loaded on first use like the top
    # facade's: __all__, the TYPE_CHECKING imports and the loader's table name each name once,
    # each at the module that defines it.
    records = counterfact.records
    where = records._WHERE
    exported = records.__all__
    assert len(exported) == len(set(exported)) and set(exported) == set(where)
    assert _type_checking_imports(Path(records.__file__)) == {
        (module, name) for name, module in where.items()
    }
    for name, module in where.items():
        value = getattr(records, name)
        assert value is getattr(importlib.import_module(module), name)
        if isinstance(value, type) or callable(value):
            assert value.__module__ == module, f"{name} is defined in {value.__module__}"


def test_the_records_facade_loads_a_name_s_module_only() -> None:
    # The engine takes one constant from counterfact.records.runs on the CLI's way to checking a
    # sweep file; the package must not build every record model for it (a new process, since
    # this one has loaded them all).
    probe = (
        "import sys\n"
        "from counterfact.records import RUN_SCHEMA_VERSION\n"
        "print(sorted(m for m in sys.modules if m.startswith('counterfact.records.')))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['counterfact.records.runs']"


def test_the_records_submodules_are_attributes_too() -> None:
    # Before the facade was lazy, importing it set every submodule as an attribute.
    records = counterfact.records
    folder = Path(records.__file__).parent
    assert {p.stem for p in folder.glob("*.py")} - {"__init__"} == records._SUBMODULES
    assert records.vocabulary.__name__ == "counterfact.records.vocabulary"
    assert set(records._SUBMODULES) <= set(dir(records))
