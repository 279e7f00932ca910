"""How many modules a value crosses as a function argument: for each name given, the package
modules (tests and scripts left out) that define a function taking a parameter of that name,
counted from the source with ``ast`` (nothing is imported or run).

    python scripts/count_crossings.py [--tree DIR] effect samples

A value carried inside an object (a field of ``Design``) is not counted: the count is of the
signatures a reader must follow to see where the value goes. ``docs/architecture.md`` gives the
figures before and after a change, with the commits.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

ROOTS = ("counterfact", "records", "probes", "verdicts", "orchestrator")


def takes(tree: ast.AST, name: str) -> list[str]:
    """The functions in ``tree`` with a parameter called ``name``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
            if any(a.arg == name for a in params):
                found.append(node.name)
    return found


def modules_taking(root: Path, name: str) -> dict[str, list[str]]:
    """By module path (relative to ``root``): the functions there that take ``name``."""
    out: dict[str, list[str]] = {}
    for top in ROOTS:
        for path in sorted((root / top).rglob("*.py")):
            functions = takes(ast.parse(path.read_text(encoding="utf-8")), name)
            if functions:
                out[str(path.relative_to(root))] = functions
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="+")
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    for name in args.names:
        found = modules_taking(args.tree, name)
        print(f"{name}: {len(found)} modules")
        for module, functions in found.items():
            print(f"  {module}: {', '.join(functions)}")


if __name__ == "__main__":
    main()
