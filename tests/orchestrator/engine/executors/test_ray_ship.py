"""Path runners travel with the sweep: the shipped path is used where the original is missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from counterfact import ExecutorError
from counterfact.orchestrator.engine.executors.ray_ship import (
    JOB_CONFIG_ENV,
    init_runtime_env,
    shipped,
)
from counterfact.orchestrator.engine.loading.loader import TargetRef, load_target


def test_a_worker_without_the_drivers_path_loads_the_shipped_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "far_agent.py").write_text("def run(ctx):\n    return 'shipped'\n")
    monkeypatch.chdir(tmp_path)  # the worker's working directory: the shipped folder
    ref = TargetRef("file", "/nowhere/on/this/node/far_agent.py", "run", "agents/far_agent.py")
    assert load_target(ref)(None) == "shipped"


def test_without_a_shipped_copy_the_missing_path_is_reported(tmp_path: Path) -> None:
    from counterfact import RunnerImportError

    ref = TargetRef("file", str(tmp_path / "gone.py"), "run", "gone.py")
    with pytest.raises(RunnerImportError, match=r"gone\.py' does not exist"):
        load_target(ref)


def test_outside_a_job_the_runner_folder_is_the_working_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(JOB_CONFIG_ENV, raising=False)
    ref = TargetRef("file", str(tmp_path / "agent.py"), "run")
    assert init_runtime_env(str(tmp_path)) == {"working_dir": str(tmp_path)}
    assert shipped(ref, str(tmp_path), "/unused") == TargetRef(
        "file", ref.location, "run", "agent.py"
    )


def test_inside_a_job_the_jobs_working_dir_already_ships_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = {"runtime_env": {"working_dir": "gcs://_ray_pkg_x.zip"}}
    monkeypatch.setenv(JOB_CONFIG_ENV, json.dumps(job))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    ref = TargetRef("file", str(tmp_path / "configs" / "agent.py"), "run")
    assert init_runtime_env(str(tmp_path / "configs")) is None
    assert shipped(ref, str(tmp_path / "configs"), str(tmp_path)).shipped_as == "configs/agent.py"  # type: ignore[union-attr]
    outside = TargetRef("file", "/elsewhere/agent.py", "run")
    with pytest.raises(ExecutorError, match="outside the job's working directory"):
        shipped(outside, "/elsewhere", str(tmp_path))


def test_module_runners_and_local_sweeps_ship_nothing() -> None:
    ref = TargetRef("module", "pkg.agent", "run")
    assert shipped(ref, "/x", "/") is ref and init_runtime_env(None) is None
