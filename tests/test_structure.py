"""The architecture, pinned: one-way arrows between the layers, pure layers, short functions.

Read from the source with ``ast`` (imports inside functions count too), so a violation fails here
before it reaches review. ``docs/architecture.md`` draws the same rules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_DIRS = {
    "counterfact": ROOT / "counterfact",
    "counterfact.orchestrator": ROOT / "orchestrator",
    "counterfact.probes": ROOT / "probes",
    "counterfact.verdicts": ROOT / "verdicts",
    "counterfact.records": ROOT / "records",
}
MAX_FUNCTION_LINES = 80


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for prefix, folder in PACKAGE_DIRS.items():
        for path in folder.rglob("*.py"):
            rel = path.relative_to(folder).with_suffix("").parts
            if prefix == "counterfact" and rel[0] in {
                "orchestrator",
                "probes",
                "verdicts",
                "records",
            }:
                continue  # the symlinked subpackages, counted from their own folders
            parts = [p for p in rel if p != "__init__"]
            found[".".join([prefix, *parts])] = path
    return found


MODULES = _modules()


def _imports(path: Path) -> set[str]:
    """Every module a file imports; ``from a import b`` also counts as ``a.b`` (b may be a
    module)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_no_relative_imports() -> None:
    # The arrow checks read absolute module names; a relative import would slip past them.
    relative = [
        f"{module}:{node.lineno}"
        for module, path in MODULES.items()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.level > 0
    ]
    assert relative == []


def _offenders(importer: str, forbidden: tuple[str, ...]) -> list[str]:
    bad = []
    for module, path in MODULES.items():
        if module == importer or module.startswith(importer + "."):
            for name in _imports(path):
                if any(name == f or name.startswith(f + ".") for f in forbidden):
                    bad.append(f"{module} imports {name}")
    return sorted(bad)


ENGINE_ROOMS = (
    "calling",
    "pacing",
    "watching",
    "executors",
    "stopping",
    "sourcing",
    "judging",
    "loading",
)
"""The engine's rooms, by job (``scripts/regroup_rooms.py`` made them; docs/architecture.md)."""
DRIVERS = tuple(
    m
    for m, p in MODULES.items()
    if p.parent == ROOT / "orchestrator" / "drivers" and p.stem != "__init__"
)
"""The run drivers: the modules directly in ``orchestrator/drivers/``."""

RULES = [
    # (importer, what it must not import, why)
    (
        "counterfact.records",
        (
            "counterfact.probes",
            "counterfact.verdicts",
            "counterfact.orchestrator",
            "counterfact.exceptions",
            "numpy",
            "scipy",
            "rapidfuzz",
            "pandas",
            "ray",
        ),
        "records are the ground floor: pydantic and the standard library only",
    ),
    (
        "counterfact.probes",
        ("counterfact.verdicts", "counterfact.orchestrator"),
        "probes is the bottom",
    ),
    ("counterfact.verdicts", ("counterfact.orchestrator",), "verdicts sits below how runs happen"),
    (
        "counterfact.probes",
        ("ray", "structlog", "logging", "os", "pathlib", "numpy.random"),
        "pure",
    ),
    ("counterfact.verdicts", ("ray", "structlog", "logging", "os", "pathlib"), "pure"),
    (
        "counterfact.orchestrator.storage",
        (
            "counterfact.orchestrator.config",
            "counterfact.orchestrator.cli",
            "counterfact.orchestrator.drivers",
            "counterfact.orchestrator.engine",
        ),
        "storage knows records and files only",
    ),
    (
        "counterfact.orchestrator.engine",
        (
            "counterfact.orchestrator.config",
            "counterfact.orchestrator.cli",
            "counterfact.orchestrator.drivers",
        ),
        "the engine runs what it is given",
    ),
    (
        "counterfact.orchestrator.config",
        (
            "counterfact.orchestrator.cli",
            "counterfact.orchestrator.drivers",
            "counterfact.orchestrator.storage",
        ),
        "configuration only declares",
    ),
    (
        "counterfact.orchestrator.runners",
        (
            "counterfact.orchestrator.cli",
            "counterfact.orchestrator.drivers",
            "counterfact.orchestrator.storage",
            "counterfact.orchestrator.engine",
        ),
        "a built-in runner is a runner: a RunContext in, a RunResult out, its config its input",
    ),
    (
        "counterfact.verdicts.bisect",
        ("counterfact.verdicts.report", "counterfact.verdicts.planning"),
        "the culprit search is judged, not rendered or planned",
    ),
    (
        "counterfact.verdicts.wording",
        (
            "counterfact.verdicts.report",
            "counterfact.verdicts.planning",
            "counterfact.verdicts.bisect",
        ),
        "shared words sit below every room that speaks them",
    ),
    ("counterfact.orchestrator.drivers", ("counterfact.orchestrator.cli",), "the CLI is on top"),
    (
        "counterfact.orchestrator.engine.pacing",
        tuple(
            f"counterfact.orchestrator.engine.{room}" for room in ENGINE_ROOMS if room != "pacing"
        ),
        "pacing is the engine's ground floor: numbers, clocks and limits, no runs",
    ),
    (
        "counterfact.orchestrator.engine.watching",
        tuple(
            f"counterfact.orchestrator.engine.{room}"
            for room in ("executors", "stopping", "sourcing", "judging")
        ),
        "watching reads the counts it is given; it never drives, stops or sources a run",
    ),
    (
        "counterfact.orchestrator.drivers.outputs",
        (*DRIVERS, "counterfact.orchestrator.drivers.gating", "counterfact.orchestrator.engine"),
        "outputs are written from the records a driver made; they never run one",
    ),
    (
        "counterfact.orchestrator.cli",
        ("counterfact.orchestrator.storage",),
        "the CLI reaches records through the drivers",
    ),
    (
        "counterfact.orchestrator.view",
        (
            "counterfact.orchestrator.cli",
            "counterfact.orchestrator.config",
            "counterfact.orchestrator.drivers",
            "counterfact.orchestrator.engine",
            "counterfact.orchestrator.storage",
            "counterfact.probes",
            "counterfact.verdicts",
            "ray",
        ),
        "the viewer reads the record contract only (it may serve a folder no engine wrote)",
    ),
]


@pytest.mark.parametrize(("importer", "forbidden", "why"), RULES)
def test_imports_point_one_way(importer: str, forbidden: tuple[str, ...], why: str) -> None:
    assert _offenders(importer, forbidden) == [], why


def test_the_rules_see_the_tree() -> None:
    # A rule over a misspelt or moved package would pass vacuously; every importer must exist.
    for importer, _, _ in RULES:
        assert any(m.startswith(importer + ".") for m in MODULES), importer
    assert "counterfact.orchestrator.storage.rundir" in MODULES
    assert "counterfact.orchestrator.drivers.sweep" in DRIVERS
    for room in ENGINE_ROOMS:
        assert f"counterfact.orchestrator.engine.{room}" in MODULES, room
    # and the checker sees real arrows, including imports inside functions (the CLI's lazy ones)
    assert _offenders("counterfact.orchestrator.drivers", ("counterfact.orchestrator.config",))
    assert "counterfact.orchestrator.cli.run imports counterfact.orchestrator.drivers.sweep" in (
        _offenders("counterfact.orchestrator.cli", ("counterfact.orchestrator.drivers",))
    )


VERDICTS = ROOT / "verdicts"
JUDGING = sorted(m for m, p in MODULES.items() if p.parent == VERDICTS and p.stem != "__init__")
"""The judging modules: directly in verdicts/ (the two relocations among them)."""
MAX_JUDGING = 16
STATS = sorted(m for m in MODULES if m.startswith("counterfact.verdicts.stats."))
STATS_MAY_IMPORT = (
    "counterfact.records",
    "counterfact.defaults",
    "counterfact.probes.pairs",  # the seed pairs the paired tests read
    "counterfact.verdicts.stats",
)
"""All of counterfact a statistics kernel may import: no other verdicts module or room."""


@pytest.mark.parametrize("module", STATS)
def test_a_statistics_kernel_imports_only_the_records_and_the_defaults(module: str) -> None:
    stray = sorted(
        name
        for name in _imports(MODULES[module])
        if name.split(".")[0] == "counterfact"
        and not any(name == a or name.startswith(a + ".") for a in STATS_MAY_IMPORT)
    )
    assert stray == [], f"{module} imports {stray}"


@pytest.mark.parametrize("module", JUDGING)
def test_judging_never_imports_the_report_or_the_planning(module: str) -> None:
    # The report renders what judging decided and planning builds on it; never the reverse.
    rooms = ("counterfact.verdicts.report", "counterfact.verdicts.planning")
    bad = sorted(
        name
        for name in _imports(MODULES[module])
        if any(name == r or name.startswith(r + ".") for r in rooms)
    )
    assert bad == [], f"{module} imports {bad}"


def test_verdicts_keeps_its_judging_modules_and_its_rooms_apart() -> None:
    # At most 16 modules directly in verdicts/ (the rest live in its subpackages), and the
    # parametrized checks above see real modules rather than passing over an empty list.
    assert len(JUDGING) <= MAX_JUDGING, JUDGING
    assert {"counterfact.verdicts.assess", "counterfact.verdicts.records"} <= set(JUDGING)
    assert "counterfact.verdicts.stats.significance" in STATS
    assert "counterfact.verdicts.stats.significance" not in JUDGING


def test_no_function_is_longer_than_a_screen() -> None:
    long = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{module}.{node.name}: {lines} lines")
    assert long == []


def test_loading_a_record_imports_nothing_heavy() -> None:
    # A notebook reading verdicts.jsonl must not pay for numpy, scipy, rapidfuzz, pandas or Ray.
    import subprocess
    import sys

    code = (
        "import sys, counterfact.records as r\n"
        "from counterfact.records import VerdictRecord, RunRecord, read_runs\n"
        "heavy = {'numpy', 'scipy', 'rapidfuzz', 'pandas', 'ray'}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_no_module_has_a_second_import_name_from_the_repository_root() -> None:
    # From the repository root the top-level folders are importable as `probes`, `verdicts` ...
    # (the working directory is on sys.path); each refuses, so `probes.runner.RunContext` can
    # never be a second class beside `counterfact.probes.runner.RunContext`.
    import subprocess
    import sys

    second = sorted(
        name.removeprefix("counterfact.")
        for name in MODULES
        if name.split(".")[1:2]
        and name.split(".")[1] in {"orchestrator", "probes", "verdicts", "records"}
    )
    assert "probes.runner" in second and "orchestrator.drivers.session" in second
    script = (
        "import importlib, sys\n"
        "ok = []\n"
        "for name in sys.argv[1:]:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except ImportError as exc:\n"
        "        assert 'import counterfact.' in str(exc), (name, exc)\n"
        "    else:\n"
        "        ok.append(name)\n"
        "print(','.join(ok))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *second],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert done.stdout.strip() == "", f"importable under a second name: {done.stdout}"


FACADES = {"counterfact", "counterfact.records"}
"""The two surfaces users import from; inside the package nothing imports through them."""
RELOCATED = {
    "counterfact.probes.records",
    "counterfact.verdicts.records",
    "counterfact.verdicts.seedsets",
}
"""Declared relocations (counterfact/deprecation.py): old paths that warn until 0.2.0."""


def _defined(module: str) -> set[str]:
    """The names a module binds itself at its top level (``if``/``try`` blocks included)."""
    names: set[str] = set()
    for top in ast.parse(MODULES[module].read_text(encoding="utf-8")).body:
        for node in ast.walk(top) if isinstance(top, ast.If | ast.Try) else [top]:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(
                node.target, ast.Name
            ):
                names.add(node.target.id)
    return names


def test_every_import_names_the_module_that_defines_it() -> None:
    # One import path per name: no module re-exports another's names. The two facades are for
    # users only: the package itself never imports through them, nor through a relocation.
    bad = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.module in MODULES):
                continue
            if node.module in FACADES | RELOCATED:
                if module not in FACADES:
                    bad.append(f"{module}:{node.lineno} imports through {node.module}")
                continue
            defined = _defined(node.module)
            bad += [
                f"{module}:{node.lineno} {node.module}.{alias.name} is defined elsewhere"
                for alias in node.names
                if alias.name not in defined and f"{node.module}.{alias.name}" not in MODULES
            ]
    assert bad == []


def test_no_module_re_exports_with_as() -> None:
    # `import X as X` is the explicit re-export idiom: only the facades may re-export.
    bad = [
        f"{module}:{node.lineno} {alias.name}"
        for module, path in MODULES.items()
        if module not in FACADES
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.asname == alias.name
    ]
    assert bad == []


def test_the_re_export_checks_see_the_tree() -> None:
    # Every facade and relocation named above exists, and the checker sees a real definition.
    assert set(MODULES) >= FACADES | RELOCATED
    assert {"RunRecord", "RUN_SCHEMA_VERSION"} <= _defined("counterfact.records.runs")
    assert "RunRecord" not in _defined("counterfact.records")


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            step = next((w for w in edges if w not in index or w in on_stack), None)
            if step is not None:
                if step in index:
                    low[node] = min(low[node], index[step])
                else:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.append(member)
                    if member == node:
                        break
                if len(part) > 1:
                    circles.append(sorted(part))
    return sorted(circles)


def test_no_import_circle() -> None:
    # No two modules import each other, directly or around a loop (imports inside functions and
    # under TYPE_CHECKING count: a circle there is one refactor away from an ImportError).
    graph = {m: {n for n in _imports(p) if n in MODULES and n != m} for m, p in MODULES.items()}
    assert _circles(graph) == []


def test_no_import_circle_between_subpackages() -> None:
    # the rooms too: orchestrator.config may build on orchestrator.runners or the reverse, not both
    def room(name: str) -> str:
        return ".".join(name.split(".")[:3])

    graph: dict[str, set[str]] = {}
    for m, p in MODULES.items():
        graph.setdefault(room(m), set()).update(
            room(n) for n in _imports(p) if n in MODULES and room(n) != room(m)
        )
    for targets in list(graph.values()):
        for t in targets:
            graph.setdefault(t, set())
    assert _circles(graph) == []


def test_the_circle_check_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert _circles(graph) == [["a", "b", "c"]]


SUBROOMS = {
    ".".join(m.split(".")[2:4])
    for m, p in MODULES.items()
    if m.startswith("counterfact.orchestrator.") and m.count(".") == 3 and p.name == "__init__.py"
}
"""The rooms inside an orchestrator subpackage (``engine.pacing``, ``drivers.outputs`` ...): each
subpackage of a subpackage, named by its job."""


def room_of(module: str) -> str | None:
    """The room a module lives in: a subpackage of ``counterfact.orchestrator`` (named by its
    folder: ``cli``, ``drivers`` ...) or a subpackage of one (``engine.pacing``), one of the other
    three linked folders, or a top-level module (``testing_plugin`` with ``testing``;
    ``counterfact`` is the facade); None for a package that holds only rooms and a docstring
    (``counterfact.orchestrator``, ``counterfact.orchestrator.engine``).
    """
    parts = module.split(".")
    if parts[1:2] == ["orchestrator"]:
        if len(parts) > 3 and ".".join(parts[2:4]) in SUBROOMS:
            return ".".join(parts[2:4])
        if len(parts) == 3 and MODULES[module].name == "__init__.py":
            return None  # a package's docstring: its modules are its room
        return parts[2] if len(parts) > 2 else None
    if len(parts) == 1:
        return "counterfact"
    return "testing" if parts[1] == "testing_plugin" else parts[1]


def rooms() -> dict[str, set[str]]:
    """Each room, and the rooms it imports (its arrows)."""
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        here = room_of(module)
        if here is None:
            continue
        targets = {room_of(n) for n in _imports(path) if n in MODULES}
        graph.setdefault(here, set()).update(t for t in targets if t not in (None, here))
    return graph


def floors(graph: dict[str, set[str]]) -> dict[str, int]:
    """Each room's floor: 0 for a room that imports none, else one above the highest room it
    imports (so every arrow runs down; a circle has no floors, and is named instead).
    """
    circles = _circles(graph)
    assert circles == [], f"rooms import each other: {circles}"
    found: dict[str, int] = {}

    def floor(room: str) -> int:
        if room not in found:
            found[room] = 1 + max((floor(t) for t in graph[room]), default=-1)
        return found[room]

    for room in graph:
        floor(room)
    return found


def floors_text() -> str:
    """The floors and arrows as ``docs/architecture.md`` draws them, top floor first."""
    graph = rooms()
    level = floors(graph)
    width = max(12, *(len(r) for r in graph))
    lines = []
    for n in range(max(level.values()), -1, -1):
        for room in sorted(r for r in graph if level[r] == n):
            arrows = ", ".join(sorted(graph[room], key=lambda t: (-level[t], t))) or "-"
            lines.append(f"{n:<2} {room:<{width}} -> {arrows}")
    arrows = sum(len(t) for t in graph.values())
    floors_seen = max(level.values()) + 1
    lines.append(f"{len(graph)} rooms on {floors_seen} floors, {arrows} arrows")
    return "\n".join(lines)


def test_the_architecture_doc_draws_the_floors_measured_here() -> None:
    # The floors as the imports make them (printed: pytest -s tests/test_structure.py -k floors,
    # or python tests/test_structure.py); docs/architecture.md carries the same block verbatim.
    drawn = floors_text()
    print(drawn)
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert drawn in doc, "docs/architecture.md's floors are out of date; paste:\n" + drawn


def test_no_import_circle_between_rooms() -> None:
    # the rooms inside the engine and the drivers too: every arrow between them runs one way
    assert _circles(rooms()) == []


def test_the_engine_and_the_drivers_keep_their_rooms() -> None:
    # Every engine module lives in a room named by its job (none loose in engine/), the drivers
    # keep only run drivers loose, and a room's __init__.py is its docstring (no re-exports).
    loose = [m for m, p in MODULES.items() if p.parent == ROOT / "orchestrator" / "engine"]
    assert loose == ["counterfact.orchestrator.engine"]
    assert {f"engine.{r}" for r in ENGINE_ROOMS} | {"drivers.outputs", "drivers.gating"} == SUBROOMS
    for room in SUBROOMS:
        body = ast.parse(MODULES[f"counterfact.orchestrator.{room}"].read_text("utf-8")).body
        assert len(body) == 1 and isinstance(body[0], ast.Expr), room


def test_the_floors_count_every_room_once() -> None:
    graph = rooms()
    assert {"records", "probes", "verdicts", "cli", "view", "counterfact"} <= set(graph)
    assert {"engine.pacing", "drivers", "drivers.outputs"} <= set(graph) and "engine" not in graph
    level = floors(graph)
    assert level["records"] == 0 and level["cli"] == max(level.values())
    assert all(level[t] < level[r] for r, targets in graph.items() for t in targets)


if __name__ == "__main__":
    print(floors_text())
