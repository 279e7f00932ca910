"""Path runners travel with the sweep: a file runner's folder reaches every node of a cluster.

Joining a cluster, the file ``path/to/agent.py`` need not exist on the workers:

- inside a Ray job (``ray job submit --working-dir DIR``), the job's working directory is
  already shipped to every node and is each worker's working directory; the runner must lie
  inside it, and workers load it by its path relative to it;
- otherwise the runner's folder becomes the job-level ``runtime_env`` ``working_dir`` passed to
  ``ray.init`` (Ray uploads it once; its size limit applies), and workers load the file from
  their working directory.

Either way the :class:`~counterfact.orchestrator.engine.loading.loader.TargetRef` sent to workers
carries ``shipped_as``; a node that has the original path still uses it.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from counterfact.exceptions import ExecutorError
from counterfact.orchestrator.engine.loading.loader import RunnerRef, TargetRef

JOB_CONFIG_ENV = "RAY_JOB_CONFIG_JSON_ENV_VAR"


def job_working_dir() -> bool:
    """True inside a Ray job whose runtime_env ships a working directory."""
    raw = os.environ.get(JOB_CONFIG_ENV)
    if not raw:
        return False
    try:
        return bool(json.loads(raw).get("runtime_env", {}).get("working_dir"))
    except (ValueError, AttributeError):
        return False


def init_runtime_env(ship_dir: str | None) -> dict[str, Any] | None:
    """The ``runtime_env`` for ``ray.init`` when joining a cluster (None: nothing to ship)."""
    if ship_dir is None or job_working_dir():
        return None
    return {"working_dir": ship_dir}


def shipped(runner: RunnerRef, ship_dir: str | None, job_root: str) -> RunnerRef:
    """``runner`` with ``shipped_as`` set, for a file runner on a cluster. ``job_root`` is the
    driver's working directory when it started (inside a job: the job's working directory; Ray
    may remove the driver's copy once it joins, so it is taken before).

    Raises:
        ExecutorError: inside a job, the runner lies outside the job's working directory.
    """
    if ship_dir is None or not isinstance(runner, TargetRef) or runner.kind != "file":
        return runner
    root = Path(job_root) if job_working_dir() else Path(ship_dir)
    rel = os.path.relpath(runner.location, root)
    if rel.startswith(".."):
        msg = (
            f"the runner file {runner.location} lies outside the job's working directory "
            f"{root}, so the worker nodes would not have it; submit with --working-dir set to a "
            "folder that contains both the sweep file and the runner"
        )
        raise ExecutorError(msg)
    return replace(runner, shipped_as=rel)
