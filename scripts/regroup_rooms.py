"""Regroup ``orchestrator/engine/`` and ``orchestrator/drivers/`` into rooms named by job
(issue 42, item 5), on whatever tree it runs in; a second run is a no-op.

    python scripts/regroup_rooms.py            # move, rewrite, format; prints what it did
    python scripts/regroup_rooms.py --dry-run  # say what it would do, change nothing

What it does, in order:

1. Takes stock: every module under ``orchestrator/engine/`` and ``orchestrator/drivers/`` must be
   placed by :data:`MOVES` (old or new name), kept by :data:`STAYS`, or already sit in a room
   (``executors/``). A module loose in ``engine/`` or ``drivers/`` that the tables do not place
   (one added since they were written) stops the script with exit code 1 and the list: add it
   to a table, then run again. Nothing is changed before that check passes.
2. ``git mv`` each module of :data:`MOVES` still at its old path (history follows), and its
   tests (``test_<module>*.py``) into the room's folder under ``tests/`` (tests mirror the
   rooms); writes each room's ``__init__.py`` (a one-line docstring saying the room's job; no
   re-exports: every name has one import path, ``tests/test_structure.py``) and the two
   parents' docstrings.
3. Rewrites every reference in the tracked text files (this script excepted): dotted names
   (``counterfact.orchestrator.engine.x``, ``orchestrator.engine.x``, ``engine.x``: imports,
   monkeypatch targets, mkdocstrings ``:::`` lines, cross-references), ``from <package> import
   <module>`` statements, paths (``orchestrator/engine/x.py``, ``engine/x.py``), and relative
   imports and ``~.x`` cross-references whose sibling moved to another room.
4. Rewraps the prose lines the longer names pushed past 100 columns, runs ``ruff check --select
   I --fix`` and ``ruff format`` on the Python files it changed (imports re-sorted and
   re-wrapped), then pastes the floors ``tests/test_structure.py`` prints into
   ``docs/architecture.md`` and the room table (from :data:`ROOMS`) between its markers.

On a tree that has moved on: run it; a module it refuses goes into a table (a new run driver
into :data:`STAYS`, anything else into :data:`MOVES`). The structure test's rooms
(``SUBROOMS``, ``ENGINE_ROOMS`` and their rules) and the rooms' prose in docs/architecture.md
are the commit after the move on branch ``rooms42``; take it, then run this once more, which
pastes the floors the merged imports make.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ORCH = "counterfact.orchestrator"
SELF = Path(__file__).resolve()

ROOMS: dict[str, str] = {
    "engine.calling": "Calling runners: a run called and checked, its event loop, guard and watch.",
    "engine.pacing": "Pacing: the throttle, worker allowances, rate-limit replies, budget, spend.",
    "engine.watching": "Watching a sweep: live counts, live.json, the progress line, events.",
    "engine.executors": "Executors by name (local, ray), and the feed of runs they draw from.",
    "engine.stopping": "Stopping a sweep: Ctrl-C and stop signals; a runner that always fails.",
    "engine.sourcing": "What a sweep runs, where each record comes from, its phases' clock.",
    "engine.judging": "The model judge (comparator kind judge): its calls and judge.jsonl.",
    "engine.loading": "What the process loads and holds: user code, embedders, the heap.",
    "drivers.outputs": "Outputs beside the records: exports, report.html, JSON Schemas.",
    "drivers.gating": "The CI gate (--fail-on): the states a job fails on, read back.",
}
"""Each room (relative to ``counterfact.orchestrator``) and its job: the docstring of the
``__init__.py`` written when the room is created (one line; none re-exports anything), and its
line in ``docs/architecture.md``."""

PARENTS: dict[str, str] = {
    "engine": "The engine, in rooms by job (docs/architecture.md lists them); no re-exports.",
    "drivers": "The run drivers (sweep, bisect, the Python API); outputs and the gate in rooms.",
}
"""The two parents' docstrings (their ``__init__.py`` re-export nothing, so only these change)."""

_ENGINE_ROOMS = {
    "calling": "worker arun loops loopguard loopwatch aborting",
    "pacing": "throttle allowance ratelimits budget spend",
    "watching": "events live liveticker progress progressline",
    "executors": "feed",
    "stopping": "interrupt failwatch",
    "sourcing": "plan source timings",
    "judging": "judge judgecalls judgefile",
    "loading": "loader embedders heap",
}
MOVES: dict[str, str] = {
    f"engine.{module}": f"engine.{room}.{module}"
    for room, modules in _ENGINE_ROOMS.items()
    for module in modules.split()
}
MOVES.update(
    {
        f"drivers.{module}": f"drivers.outputs.{module}"
        for module in ("export", "export_runs", "columns", "report", "schemas")
    }
)
MOVES.update(
    {"drivers.gate": "drivers.gating.states", "drivers.gatecheck": "drivers.gating.reading"}
)
"""Old module -> new module, relative to ``counterfact.orchestrator``."""

STAYS: set[str] = {
    *(
        f"drivers.{m}"
        for m in [
            *("api", "bisect", "sweep", "session", "sequential", "waves", "probing"),
            *("preflight", "provenance", "plan", "sweepkeys", "sweeptimes", "ending"),
        ]
    ),
    *(
        f"engine.executors.{m}"
        for m in [
            *("base", "handover", "local", "pooling", "registry", "ray_address", "ray_drive"),
            *("ray_exec", "ray_pool", "ray_ship", "ray_watch"),
        ]
    ),
}
"""Modules that keep their place: the run drivers, and the executors room as it was."""

DOC = ROOT / "docs" / "architecture.md"
ROOMS_BEGIN = "<!-- rooms: written by scripts/regroup_rooms.py from its ROOMS table -->"
ROOMS_END = "<!-- /rooms -->"


def path_of(dotted: str) -> Path:
    """The file of a module named relative to ``counterfact.orchestrator``."""
    return ROOT / "orchestrator" / (dotted.replace(".", "/") + ".py")


def found_modules() -> set[str]:
    """Every module (not package) under engine/ and drivers/, relative to the orchestrator."""
    found = set()
    for top in ("engine", "drivers"):
        for path in (ROOT / "orchestrator" / top).rglob("*.py"):
            if path.name != "__init__.py":
                rel = path.relative_to(ROOT / "orchestrator").with_suffix("")
                found.add(".".join(rel.parts))
    return found


def take_stock() -> list[tuple[str, str]]:
    """The moves still to make; exits 1 listing every module the tables do not place."""
    found = found_modules()
    placed = set(MOVES) | set(MOVES.values()) | STAYS
    in_a_room = {name for name in found if name.rsplit(".", 1)[0] in ROOMS}  # placed by its folder
    stray = sorted(found - placed - in_a_room)
    both = sorted(old for old, new in MOVES.items() if old in found and new in found)
    if stray or both:
        for name in stray:
            print(f"not placed: {ORCH}.{name} ({path_of(name).relative_to(ROOT)})")
        for name in both:
            print(f"at both its old and new path: {ORCH}.{name} and {ORCH}.{MOVES[name]}")
        print(
            "regroup_rooms: add each module above to MOVES (old -> new) or STAYS in "
            "scripts/regroup_rooms.py, then run it again; nothing was changed.",
            file=sys.stderr,
        )
        sys.exit(1)
    missing = sorted(old for old, new in MOVES.items() if old not in found and new not in found)
    for name in missing:
        print(f"note: {ORCH}.{name} is in MOVES but in neither place (removed?)")
    return [(old, new) for old, new in MOVES.items() if old in found]


def git(*args: str) -> str:
    """Run git in the repository; its stdout."""
    done = subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True)
    return done.stdout


def write_if_changed(path: Path, text: str, dry: bool) -> bool:
    """Write ``text`` unless the file already holds it; True when it changed (or would)."""
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    if not dry:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        git("add", str(path.relative_to(ROOT)))
    return True


def set_docstring(path: Path, text: str, dry: bool, *, replace: bool) -> bool:
    """Write a package ``__init__.py`` holding the one-line docstring ``text``: always when
    ``replace`` (the two parents, docstring only), else only when the file is missing.
    """
    line = f'"""{text}"""'
    assert len(line) <= 100, f"docstring over 100 columns: {line}"
    if path.exists() and not replace:
        return False
    return write_if_changed(path, line + "\n", dry)


def move(todo: list[tuple[str, str]], dry: bool) -> list[str]:
    """``git mv`` each module; write the rooms' and the parents' docstrings."""
    done = []
    for room, job in ROOMS.items():
        init = ROOT / "orchestrator" / room.replace(".", "/") / "__init__.py"
        if set_docstring(init, job, dry, replace=False):
            done.append(f"wrote {room}/__init__.py")
    for old, new in todo:
        src, dst = path_of(old), path_of(new)
        done.append(f"git mv {src.relative_to(ROOT)} {dst.relative_to(ROOT)}")
        if not dry:
            dst.parent.mkdir(parents=True, exist_ok=True)
            git("mv", str(src.relative_to(ROOT)), str(dst.relative_to(ROOT)))
    for parent, job in PARENTS.items():
        if set_docstring(ROOT / "orchestrator" / parent / "__init__.py", job, dry, replace=True):
            done.append(f"wrote {parent}/__init__.py")
    return done


def check_tables() -> None:
    """The tables keep a second run a no-op: no new name starts with an old one (``drivers.gate``
    as a room would turn ``drivers.gate.states`` into ``drivers.gate.states.states``).
    """
    olds = set(MOVES)
    clash = sorted(
        f"{old} -> {name}"
        for old in olds
        for name in {*MOVES.values(), *ROOMS, *STAYS}
        if name.startswith(old + ".")
    )
    rooms_unknown = sorted(
        {new.rsplit(".", 1)[0] for new in MOVES.values()} - set(ROOMS) - {"engine", "drivers"}
    )
    if clash or rooms_unknown:
        sys.exit(f"regroup_rooms: tables inconsistent: {clash or ''} {rooms_unknown or ''}")


# --- tests mirror the rooms ---------------------------------------------------------------------

TESTS = ROOT / "tests" / "orchestrator"


def test_pairs() -> list[tuple[Path, Path]]:
    """(old test file, new test file) for the tests of each moved module: ``test_<module>.py``
    and ``test_<module>_*.py`` follow their module into the room's folder under tests/ (renamed
    with it). Found in either place, so a second run still knows the pairs.
    """
    pairs: dict[str, tuple[Path, Path]] = {}
    for old, new in sorted(MOVES.items(), key=lambda kv: -len(kv[0])):
        old_pkg, old_mod = old.rsplit(".", 1)
        new_pkg, new_mod = new.rsplit(".", 1)
        src, dst = TESTS / old_pkg.replace(".", "/"), TESTS / new_pkg.replace(".", "/")
        found = [(f, f.stem[5 + len(old_mod) :]) for f in src.glob(f"test_{old_mod}*.py")]
        found += [(f, f.stem[5 + len(new_mod) :]) for f in dst.glob(f"test_{new_mod}*.py")]
        for _, rest in found:
            if rest and not rest.startswith("_"):
                continue  # test_liveticker is not a test of live
            pair = (src / f"test_{old_mod}{rest}.py", dst / f"test_{new_mod}{rest}.py")
            pairs.setdefault(str(pair[0]), pair)  # the longest module name claims it first
    return sorted(pairs.values())


def move_tests(dry: bool) -> list[str]:
    """``git mv`` each moved module's tests into its room's folder (an empty ``__init__.py``
    beside them, as in the rest of tests/)."""
    done = []
    for src, dst in test_pairs():
        if not src.exists():
            continue
        done.append(f"git mv {src.relative_to(ROOT)} {dst.relative_to(ROOT)}")
        if dry:
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        init = dst.parent / "__init__.py"
        if not init.exists():
            init.write_text("", encoding="utf-8")
            git("add", str(init.relative_to(ROOT)))
        git("mv", str(src.relative_to(ROOT)), str(dst.relative_to(ROOT)))
        moved = _deeper_imports(dst.read_text(encoding="utf-8"), src, dst)
        dst.write_text(moved, encoding="utf-8")
    return done


def _package(path: Path) -> list[str]:
    """The package a file under the repository is in, as its parts (``tests.orchestrator``)."""
    return list(path.parent.relative_to(ROOT).parts)


def _deeper_imports(text: str, src: Path, dst: Path) -> str:
    """A moved test's relative imports (``from ...conftest import``), made to name from its new
    folder what they named from its old one (a sibling test that moved with it included).
    """
    return _relink(text, _package(src), _package(dst))


def _relink(text: str, old: list[str], new: list[str]) -> str:
    """Relative imports read from package ``old``, written from package ``new`` (the same for a
    file that stayed), each target that is a moved test sent to its new place.
    """
    pairs = {(*_package(s), s.stem): (*_package(d), d.stem) for s, d in test_pairs()}
    lines = text.splitlines(keepends=True)
    for node in ast.walk(ast.parse(text)):
        if not (isinstance(node, ast.ImportFrom) and node.level > 0):
            continue
        base = old[: len(old) - (node.level - 1)]
        target = (*base, *(node.module.split(".") if node.module else []))
        if old == new and target not in pairs:
            continue
        target = pairs.get(target, target)
        common = 0
        while common < min(len(new), len(target)) and new[common] == target[common]:
            common += 1
        level = len(new) - common + 1
        module = ".".join(target[common:])
        line = lines[node.lineno - 1]
        lines[node.lineno - 1] = re.sub(
            r"from\s+\.+[\w.]*\s+import", f"from {'.' * level}{module} import", line, count=1
        )
    return "".join(lines)


# --- references --------------------------------------------------------------------------------


def _dotted_patterns() -> list[tuple[re.Pattern[str], str]]:
    """Old dotted name -> new, with or without ``counterfact.`` / ``orchestrator.`` before it."""
    pats = []
    for old, new in sorted(MOVES.items(), key=lambda kv: -len(kv[0])):
        dotted = re.compile(
            r"(?<![\w.])((?:counterfact\.)?(?:orchestrator\.)?)" + re.escape(old) + r"(?!\w)"
        )
        pats.append((dotted, r"\g<1>" + new))
        slashed = re.compile(
            r"(?<![\w.-])((?:counterfact/)?(?:orchestrator/)?)"
            + re.escape(old.replace(".", "/"))
            + r"(?![\w/])"
        )
        pats.append((slashed, r"\g<1>" + new.replace(".", "/")))
    return pats


def _test_patterns() -> list[tuple[re.Pattern[str], str]]:
    """Paths of moved tests (``tests/orchestrator/engine/test_live.py``), old -> new."""
    pats = []
    for src, dst in test_pairs():
        old = str(src.relative_to(ROOT).with_suffix(""))
        new = str(dst.relative_to(ROOT).with_suffix(""))
        pats.append((re.compile(r"(?<![\w.-])" + re.escape(old) + r"(?![\w/])"), new))
        dotted_old, dotted_new = old.replace("/", "."), new.replace("/", ".")
        pats.append((re.compile(r"(?<![\w.])" + re.escape(dotted_old) + r"(?!\w)"), dotted_new))
    return pats


PATTERNS = _dotted_patterns()


def _module_of(path: Path) -> str | None:
    """The module a file under orchestrator/ is, relative to the orchestrator (None elsewhere)."""
    try:
        rel = path.resolve().relative_to(ROOT / "orchestrator").with_suffix("")
    except ValueError:
        return None
    return ".".join(p for p in rel.parts if p != "__init__")


def _old_package(path: Path) -> tuple[str, str] | None:
    """(the package a file is in now, the package it was in before the move), or None."""
    here = _module_of(path)
    if here is None or path.suffix != ".py":
        return None
    now = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
    back = {new: old for old, new in MOVES.items()}
    was = back.get(here, here)
    before = was if path.name == "__init__.py" else was.rsplit(".", 1)[0]
    return now, before


def _exists(dotted: str) -> bool:
    p = path_of(dotted)
    return p.exists() or (p.with_suffix("") / "__init__.py").exists()


def relative_refs(path: Path, text: str) -> str:
    """``~.x`` cross-references and ``from .x import`` in a file whose sibling ``x`` moved to
    another room: made absolute (the relative name would now point nowhere).
    """
    where = _old_package(path)
    if where is None:
        return text
    now, before = where

    def target(level: int, module: str | None) -> str | None:
        base = before.split(".")
        base = base[: len(base) - (level - 1)] if level > 1 else base
        return ".".join([*base, *([module] if module else [])])

    def ref(m: re.Match[str]) -> str:
        name = m.group(2)
        if _exists(f"{now}.{name}"):
            return m.group(0)
        old = f"{before}.{name}"
        if old in MOVES:
            return f"{m.group(1)}{ORCH}.{MOVES[old]}"
        return m.group(0)

    text = re.sub(r"(?<=`)(~?)\.([a-z_][a-z_0-9]*)(?=[.`])", ref, text)
    if "from ." not in text:
        return text
    lines = text.splitlines(keepends=True)
    for node in reversed(list(ast.walk(ast.parse(text)))):
        if not (isinstance(node, ast.ImportFrom) and node.level > 0):
            continue
        module = target(node.level, node.module)
        assert module is not None
        stmts = _split_import(module, node.names)
        pad = " " * node.col_offset
        lines[node.lineno - 1 : node.end_lineno] = [pad + s + "\n" for s in stmts]
    return "".join(lines)


def _split_import(package_or_module: str, names: list[ast.alias]) -> list[str]:
    """``from X import a, b`` with X relative to the orchestrator, each name sent where it moved
    (a moved module imported from its package keeps its old name with ``as`` when renamed)."""
    groups: dict[str, list[str]] = {}
    module = MOVES.get(package_or_module, package_or_module)
    for alias in names:
        full = f"{package_or_module}.{alias.name}"
        if full in MOVES:
            pkg, name = MOVES[full].rsplit(".", 1)
            local = alias.asname or alias.name
            groups.setdefault(pkg, []).append(name if local == name else f"{name} as {local}")
        else:
            text = alias.name if alias.asname is None else f"{alias.name} as {alias.asname}"
            groups.setdefault(module, []).append(text)
    return [f"from {ORCH}.{pkg} import {', '.join(n)}" for pkg, n in groups.items()]


def package_imports(text: str) -> str:
    """``from counterfact.orchestrator.engine import plan`` -> from the room ``plan`` moved to."""
    if "import" not in text:
        return text
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    lines = text.splitlines(keepends=True)
    hits = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and node.level == 0
        and node.module
        and node.module.startswith(ORCH + ".")
        and any(f"{node.module[len(ORCH) + 1 :]}.{a.name}" in MOVES for a in node.names)
    ]
    for node in sorted(hits, key=lambda n: -n.lineno):
        stmts = _split_import(node.module[len(ORCH) + 1 :], node.names)  # type: ignore[index]
        pad = " " * node.col_offset
        lines[node.lineno - 1 : node.end_lineno] = [pad + s + "\n" for s in stmts]
    return "".join(lines)


TEST_PATTERNS: list[tuple[re.Pattern[str], str]] = []
"""Filled in :func:`main` (the pairs are read off the tree)."""


def rewrite(path: Path, text: str) -> str:
    """Every reference to a moved module in one file, pointed at its new name."""
    if path.suffix == ".py":
        text = relative_refs(path, text)
        text = package_imports(text)
        if path.is_relative_to(ROOT / "tests") and "from ." in text:
            text = _relink(text, _package(path), _package(path))
    for pattern, replacement in PATTERNS + TEST_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def tracked_text_files() -> list[Path]:
    """The tracked files that are text (this script excepted)."""
    files = []
    for name in git("ls-files", "-z").split("\0"):
        path = ROOT / name
        if not name or path.resolve() == SELF or path.is_symlink() or not path.is_file():
            continue
        try:
            path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        files.append(path)
    return files


def rewrite_all(dry: bool) -> list[Path]:
    """Rewrite every tracked text file; the ones that changed."""
    changed = []
    for path in tracked_text_files():
        old = path.read_text(encoding="utf-8")
        new = rewrite(path, old)
        if new != old:
            changed.append(path)
            if not dry:
                path.write_text(new, encoding="utf-8")
    return changed


# --- formatting and the docs -------------------------------------------------------------------


def ruff(files: list[Path]) -> None:
    """Re-sort and re-wrap the imports of the Python files the rewrite touched."""
    py = [str(f.relative_to(ROOT)) for f in files if f.suffix == ".py" and f.exists()]
    if not py:
        return
    exe = shutil.which("ruff")
    cmd = [exe] if exe else [sys.executable, "-m", "ruff"]
    subprocess.run([*cmd, "check", "--select", "I", "--fix", "--quiet", *py], cwd=ROOT, check=False)
    subprocess.run([*cmd, "format", "--quiet", *py], cwd=ROOT, check=True)


def floors_block() -> str | None:
    """The floors ``tests/test_structure.py`` prints for this tree (None if it cannot)."""
    done = subprocess.run(
        [sys.executable, "tests/test_structure.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    if done.returncode != 0:
        print(f"note: tests/test_structure.py did not print the floors:\n{done.stderr[-2000:]}")
        return None
    return done.stdout.strip()


def rooms_table() -> str:
    """The rooms, one line each, with the modules each holds now."""
    rows = ["| room | its job | modules |", "|---|---|---|"]
    parents = {"drivers": "The run drivers: they wire a sweep's life and see every group."}
    for room, job in {**parents, **ROOMS}.items():
        folder = ROOT / "orchestrator" / room.replace(".", "/")
        held = sorted(p.stem for p in folder.glob("*.py") if p.name != "__init__.py")
        path = "orchestrator/" + room.replace(".", "/") + "/"
        rows.append(f"| `{path}` | {job} | {', '.join(held)} |")
    return "\n".join(rows)


def refresh_doc(dry: bool) -> bool:
    """Paste the floors and the room table into docs/architecture.md; True when it changed."""
    if not DOC.exists():
        return False
    text = DOC.read_text(encoding="utf-8")
    block = floors_block()
    head = text.find("## The floors")
    if block is not None and head >= 0:
        start = text.index("```\n", head) + 4
        end = text.index("```", start)
        text = text[:start] + block + "\n" + text[end:]
    table = f"{ROOMS_BEGIN}\n{rooms_table()}\n{ROOMS_END}"
    if ROOMS_BEGIN in text:
        a = text.index(ROOMS_BEGIN)
        b = text.index(ROOMS_END) + len(ROOMS_END)
        text = text[:a] + table + text[b:]
    else:
        anchor = "## Layers and the arrows between them"
        section = "## The rooms of the engine and the drivers\n\n" + table + "\n\n"
        at = text.find(anchor)
        text = text[:at] + section + text[at:] if at >= 0 else text + "\n" + section
    if text == DOC.read_text(encoding="utf-8"):
        return False
    if not dry:
        DOC.write_text(text, encoding="utf-8")
    return True


LIMIT = 100
"""ruff's line length (pyproject.toml)."""


def _text_lines(text: str) -> set[int]:
    """The lines (1-based) of a source that are prose: inside a multi-line string, or a comment."""
    lines: set[int] = set()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return lines
    for tok in tokens:
        if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
            lines.update(range(tok.start[0], tok.end[0] + 1))
        elif tok.type == tokenize.STRING and tok.string[:3] in ('"""', "'''"):
            if tok.line.strip() == tok.string:  # a one-line docstring: it may become two
                lines.add(tok.start[0])
        elif tok.type == tokenize.COMMENT and not tok.line[: tok.start[1]].strip():
            lines.add(tok.start[0])
    return lines


_NEW_ITEM = re.compile(r"\s*(?:#\s*)?(?:[-*] |\d+\. |>>>|\.\. |```|Args:|Returns:|Raises:)")


def rewrap(text: str) -> str:
    """Prose lines the longer names pushed past the limit, broken at the last space that fits;
    the rest joins the next line of the same paragraph (or a new line at the same indent).
    """
    prose = _text_lines(text)
    lines = text.split("\n")
    n = 0
    while n < len(lines):
        line = lines[n]
        if len(line) <= LIMIT or (n + 1) not in prose:
            n += 1
            continue
        lead = re.match(r"\s*(?:#\s?)?(?:[-*] )?", line)
        start = lead.end() if lead else 0
        cut = line.rfind(" ", start + 1, LIMIT + 1)
        if cut <= start:
            n += 1
            continue
        indent = re.sub(r"[-*] $", "  ", line[:start])
        head, rest = line[:cut].rstrip(), line[cut + 1 :]
        nxt = lines[n + 1] if n + 1 < len(lines) else None
        same = (
            nxt is not None
            and (n + 2) in prose
            and nxt.strip()
            and not nxt.strip().startswith('"""')
            and nxt[: len(indent)] == indent
            and not nxt[len(indent) :].startswith(" ")
            and not _NEW_ITEM.match(nxt)
        )
        lines[n] = head
        if same:
            lines[n + 1] = indent + rest + " " + nxt[len(indent) :]  # type: ignore[index]
        else:
            lines.insert(n + 1, indent + rest)
            prose = {k + 1 if k > n + 1 else k for k in prose} | {n + 2}
        n += 1
    return "\n".join(lines)


def rewrap_all(files: list[Path]) -> None:
    """Rewrap the prose of the Python files the rewrite touched."""
    for f in files:
        if f.suffix == ".py" and f.exists():
            old = f.read_text(encoding="utf-8")
            new = rewrap(old)
            if new != old:
                f.write_text(new, encoding="utf-8")


def long_lines(files: list[Path]) -> list[str]:
    """Lines ruff still finds too long in the files the rewrite touched."""
    py = [str(f.relative_to(ROOT)) for f in files if f.suffix == ".py" and f.exists()]
    if not py:
        return []
    exe = shutil.which("ruff")
    cmd = [exe] if exe else [sys.executable, "-m", "ruff"]
    done = subprocess.run(
        [*cmd, "check", "--select", "E501", "--output-format", "concise", *py],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    return [line for line in done.stdout.splitlines() if "E501" in line]


def main() -> None:
    """Take stock, move, rewrite, format, refresh the doc; print what changed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dry-run", action="store_true", help="say what would change, change nothing"
    )
    args = parser.parse_args()
    check_tables()
    todo = take_stock()
    TEST_PATTERNS[:] = _test_patterns()
    done = move(todo, args.dry_run) + move_tests(args.dry_run)
    changed = rewrite_all(args.dry_run)
    if not args.dry_run:
        rewrap_all(changed)
        ruff(changed)
    doc = False if args.dry_run else refresh_doc(False)
    for line in done:
        print(line)
    for path in changed:
        print(f"rewrote {path.relative_to(ROOT)}")
    if doc:
        print(f"refreshed {DOC.relative_to(ROOT)} (floors, rooms)")
    for line in long_lines(changed):
        print(f"warning: over 100 columns: {line}")
    if not (done or changed or doc):
        print("regroup_rooms: nothing to do (the rooms are in place)")


if __name__ == "__main__":
    main()
