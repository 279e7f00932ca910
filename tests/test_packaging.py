"""The installed wheel, not the checkout: the quickstart from the clone's root on Ray.

Ray puts the driver's working directory on every worker's ``sys.path``. Before the checkout was
itself the package, its incomplete ``counterfact/`` folder shadowed the installed package there and
every run failed (``RaySystemError``; all arms ``inconclusive (runs-failed)``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A clean venv with the wheel installed (non-editable): CI's, or one built here."""
    given = os.environ.get("COUNTERFACT_WHEEL_VENV")
    if given:
        yield Path(given)
        return
    venv = tmp_path_factory.mktemp("wheel") / "venv"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "check_wheel.py"), "--venv", str(venv)],
        check=True,
        capture_output=True,
    )
    yield venv


@pytest.mark.ray
def test_quickstart_from_clone_root_with_non_editable_install(
    wheel_venv: Path, tmp_path: Path
) -> None:
    out = tmp_path / "qs"
    done = subprocess.run(
        [
            str(wheel_venv / "bin" / "counterfact"),
            *("run", "configs/quickstart.yaml", "--executor", "ray", "--out", str(out)),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = {json.loads(line)["arm"]: json.loads(line) for line in (out / "verdicts.jsonl").open()}
    assert rows["baseline"]["is_baseline"]
    assert {a: r["verdict"] for a, r in rows.items() if a != "baseline"} == {
        "stale-index": "confirmed",
        "large-model": "not-confirmed",
        "rerank": "inconclusive",
    }
    assert rows["rerank"]["reason"] == "arm-not-applied"
    runs = [json.loads(line) for line in (out / "runs.jsonl").open()]
    assert len(runs) == 32
    assert all(r["error"] is None for r in runs)
