"""Build the wheel, install it into a clean venv outside the checkout, and import every module.

Fails (exit 1) when a tracked module of the package is missing from the wheel, when the wheel
holds a module git does not track (a stale ``build/`` folder once shipped the old layout), or
when a module fails to import from the installed copy or is imported from the checkout instead.
The wheel is built from a copy of the tracked files (symlinks kept), never from the working
folder itself, so untracked leftovers cannot leak in.

    python scripts/check_wheel.py [--venv DIR]

``--venv DIR`` keeps the venv there (CI hands it to the test that runs the quickstart against a
non-editable install); without it a temporary one is removed at the end.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"counterfact": "counterfact", "orchestrator": "counterfact.orchestrator"}
FOLDERS |= {"probes": "counterfact.probes", "verdicts": "counterfact.verdicts"}
FOLDERS |= {"records": "counterfact.records"}

NEEDS = {
    "counterfact.testing_plugin": "pytest",
    "counterfact.orchestrator.view.app": "starlette",
    "counterfact.orchestrator.view.server": "uvicorn",
    "counterfact.orchestrator.importers.recorder": "httpx",
    "counterfact.orchestrator.importers.recording": "uvicorn",
}
"""Modules that import a package the wheel does not depend on (the pytest plugin needs pytest,
which is there wherever pytest loads it; the viewer's web modules need the ``view`` extra, and
``counterfact view`` says so in one line without it; the recording proxy needs the ``record``
extra, and ``counterfact record`` says so): without it, only that import may fail."""

IMPORT_ALL = """
import importlib, json, sys
names, needs = json.loads(sys.argv[1]), json.loads(sys.argv[3])
bad = []
for name in names:
    try:
        mod = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != needs.get(name):
            bad.append(f"{name}: {type(exc).__name__}: {exc}")
        continue
    except Exception as exc:
        bad.append(f"{name}: {type(exc).__name__}: {exc}")
        continue
    if sys.argv[2] in (getattr(mod, "__file__", "") or ""):
        bad.append(f"{name}: imported from the checkout ({mod.__file__})")
print(json.dumps(bad))
"""


def _module(path: str) -> str | None:
    """``orchestrator/engine/sourcing/plan.py`` ->
    ``counterfact.orchestrator.engine.sourcing.plan``."""
    top, _, rest = path.partition("/")
    if top not in FOLDERS or not path.endswith(".py") or not rest:
        return None
    parts = [FOLDERS[top], *rest[: -len(".py")].split("/")]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def tracked_modules() -> list[str]:
    """Every module of the package that git tracks (the symlinked folders counted once)."""
    out = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    return sorted({m for line in out.splitlines() if (m := _module(line)) is not None})


def wheel_modules(wheel: Path) -> set[str]:
    """Module names of the ``.py`` files inside the wheel."""
    with zipfile.ZipFile(wheel) as zf:
        names = [n for n in zf.namelist() if n.endswith(".py") and n.startswith("counterfact/")]
    found = set()
    for name in names:
        parts = name[: -len(".py")].split("/")
        if parts[-1] == "__init__":
            parts.pop()
        found.add(".".join(parts))
    return found


def run(cmd: list[str], **kwargs: object) -> str:
    """Run ``cmd`` and return its stdout; raise with its output when it fails."""
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    if done.returncode != 0:
        msg = f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        raise RuntimeError(msg)
    return str(done.stdout)


def tracked_copy(dest: Path) -> Path:
    """Copy the files git tracks (with their working-tree contents; symlinks as symlinks)."""
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    dest.mkdir(parents=True)
    pack = subprocess.run(
        ["tar", "--null", "-T", "-", "-cf", "-"], cwd=ROOT, input=files, capture_output=True
    )
    subprocess.run(["tar", "-xf", "-"], cwd=dest, input=pack.stdout, check=True)
    return dest


def check(venv: Path, work: Path) -> list[str]:
    """Build, install and import; the list of problems (empty when the wheel is whole)."""
    dist, source = work / "dist", tracked_copy(work / "src")
    run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", str(source), "-w", str(dist)]
    )
    wheel = next(dist.glob("counterfact-*.whl"))
    expected, shipped = tracked_modules(), wheel_modules(wheel)
    problems = [f"{m}: tracked but not in {wheel.name}" for m in expected if m not in shipped]
    problems += [f"{m}: in {wheel.name} but not tracked" for m in sorted(shipped - set(expected))]
    run([sys.executable, "-m", "venv", str(venv)])
    python = str(venv / "bin" / "python")
    run([python, "-m", "pip", "install", "--quiet", str(wheel)], cwd=work)
    out = run(
        [python, "-c", IMPORT_ALL, json.dumps(expected), str(ROOT), json.dumps(NEEDS)], cwd=work
    )
    problems += json.loads(out.strip().splitlines()[-1])
    print(f"wheel {wheel.name}: {len(expected)} tracked modules, installed into {venv}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, help="keep the clean venv at this path")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="counterfact-wheel-") as tmp:
        venv = args.venv.resolve() if args.venv else Path(tmp) / "venv"
        problems = check(venv, Path(tmp))
    for problem in problems:
        print(f"FAIL {problem}", file=sys.stderr)
    if not problems:
        print("ok: every tracked module is in the wheel and imports from the installed copy")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
