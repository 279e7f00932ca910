"""Every package the code imports is one pyproject.toml declares: a fresh install must not rely
on what another dependency happens to bring along (``typing_extensions`` through pydantic, say).
"""

from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the 3.10 CI job
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ("counterfact", "probes", "verdicts", "orchestrator", "records")
"""The import package's folders (see docs/architecture.md)."""
TYPING_ONLY = {"_typeshed"}
"""Modules only a type checker has (imported under ``TYPE_CHECKING``)."""


def _declared() -> set[str]:
    """Distribution names pyproject.toml lists, core and every extra, normalized."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    specs = [*project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        specs += extra
    return {_norm(re.split(r"[\s<>=!~;\[]", spec, maxsplit=1)[0]) for spec in specs}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _imported() -> dict[str, str]:
    """Each top-level module the package imports (not the standard library's, not its own),
    with one file that imports it."""
    found: dict[str, str] = {}
    for folder in PACKAGE:
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top not in {*sys.stdlib_module_names, "counterfact", *TYPING_ONLY}:
                        found.setdefault(top, str(path.relative_to(ROOT)))
    return found


def test_every_imported_package_is_declared() -> None:
    declared, owners = _declared(), packages_distributions()
    missing = {
        top: where
        for top, where in _imported().items()
        if not {_norm(d) for d in owners.get(top, [top])} & declared
    }
    assert not missing, f"imported but not in pyproject.toml's dependencies: {missing}"


def test_the_check_would_see_an_undeclared_import() -> None:
    owners = packages_distributions()
    assert not {_norm(d) for d in owners["typing_extensions"]} & _declared()
