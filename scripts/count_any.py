"""Count ``Any`` in counterfact's public signatures (issue 42: typed values, not dict bags).

A signature is public when its function's name has no leading underscore (``__init__``
counts: it is a public class's constructor) and so has every class around it. Counted from the
source with ``ast``, in the package's folders (``counterfact/``, ``orchestrator/``, ``probes/``,
``verdicts/``, ``records/``):

- ``params``: signatures with a parameter annotated with ``Any`` anywhere in its annotation;
- ``of which dict/Mapping``: those where that ``Any`` sits inside ``dict[...]`` or
  ``Mapping[...]`` (a dict bag);
- ``returns``: signatures whose return annotation holds ``Any``.

    python scripts/count_any.py [TREE] [--list]

``TREE`` defaults to this checkout; ``--list`` prints each counted signature.
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator
from pathlib import Path

FOLDERS = ("counterfact", "orchestrator", "probes", "verdicts", "records")
LINKED = {"orchestrator", "probes", "verdicts", "records"}
"""``counterfact/`` links these; they are counted from their own folders."""
BAGS = {"dict", "Dict", "Mapping", "MutableMapping"}


def _sources(tree: Path) -> Iterator[Path]:
    for folder in FOLDERS:
        for path in sorted((tree / folder).rglob("*.py")):
            rel = path.relative_to(tree / folder).parts
            if folder == "counterfact" and rel[0] in LINKED:
                continue
            yield path


def _has_any(node: ast.AST | None) -> bool:
    if node is None:
        return False
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a quoted annotation
        return _has_any(ast.parse(node.value, mode="eval").body)
    return any(
        (isinstance(n, ast.Name) and n.id == "Any")
        or (isinstance(n, ast.Attribute) and n.attr == "Any")
        for n in ast.walk(node)
    )


def _in_bag(node: ast.AST | None) -> bool:
    """``Any`` inside ``dict[...]`` or ``Mapping[...]`` somewhere in ``node``."""
    if node is None:
        return False
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _in_bag(ast.parse(node.value, mode="eval").body)
    for n in ast.walk(node):
        if isinstance(n, ast.Subscript):
            head = n.value
            name = head.id if isinstance(head, ast.Name) else getattr(head, "attr", "")
            if name in BAGS and _has_any(n.slice):
                return True
    return False


def _public_functions(
    body: list[ast.stmt], public: bool = True
) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in body:
        if isinstance(node, ast.ClassDef):
            yield from _public_functions(node.body, public and not node.name.startswith("_"))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            name = node.name
            if public and (name == "__init__" or not name.startswith("_")):
                yield node


def _params(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    a = node.args
    extra = [x for x in (a.vararg, a.kwarg) if x is not None]
    return [*a.posonlyargs, *a.args, *a.kwonlyargs, *extra]


def count(tree: Path) -> tuple[dict[str, int], list[str]]:
    """The three counts, and each counted signature as ``path:line name``."""
    counts = {"params": 0, "bags": 0, "returns": 0}
    found: list[str] = []
    for path in _sources(tree):
        module = ast.parse(path.read_text(encoding="utf-8"))
        for fn in _public_functions(module.body):
            annotations = [p.annotation for p in _params(fn)]
            params = any(_has_any(x) for x in annotations)
            bags = any(_in_bag(x) for x in annotations)
            returns = _has_any(fn.returns)
            counts["params"] += params
            counts["bags"] += bags
            counts["returns"] += returns
            if params or returns:
                where = path.relative_to(tree).as_posix()
                found.append(f"{where}:{fn.lineno} {fn.name}")
    return counts, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", nargs="?", type=Path, default=Path(__file__).parent.parent)
    parser.add_argument("--list", action="store_true", help="print each counted signature")
    args = parser.parse_args()
    counts, found = count(args.tree.resolve())
    if args.list:
        print("\n".join(found))
    print(
        f"public signatures with Any: {counts['params']} in parameters "
        f"(of which dict/Mapping: {counts['bags']}), {counts['returns']} in return types"
    )


if __name__ == "__main__":
    main()
