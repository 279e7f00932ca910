"""What a run means: the runner's identity, and the fingerprint a run directory is bound to.

A runner's identity is ``runner_version`` when the config sets it, else a SHA-256 of the source
of the runner's module (the file for ``path/file.py:fn``; ``inspect.getsource`` of the module for
``package.module:fn`` and for Python callables). Any edit to that module therefore changes the
identity: resumed sweeps refuse it and the run cache misses, because old results may no longer
mean the same. Code the runner imports from *other* modules is not hashed — set
``runner_version`` and bump it when such code changes.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from pathlib import Path
from typing import Any

from counterfact.orchestrator.imports import TargetRef, describe_target, resolve_runner
from counterfact.orchestrator.resolve import ResolvedSweep


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def runner_identity(sweep: ResolvedSweep) -> str:
    """``<target>@version:<v>`` or ``<target>@sha256:<16 hex of the module source>``."""
    target = describe_target(sweep.config.runner)
    if sweep.config.runner_version is not None:
        return f"{target}@version:{sweep.config.runner_version}"
    ref = sweep.runner
    if isinstance(ref, TargetRef) and ref.kind == "file":
        return f"{target}@sha256:{_digest(Path(ref.location).read_bytes())}"
    fn = resolve_runner(ref)
    module = inspect.getmodule(fn)
    try:
        source = inspect.getsource(module) if module is not None else inspect.getsource(fn)
    except (OSError, TypeError):
        return f"{target}@unhashed"
    return f"{target}@sha256:{_digest(source.encode())}"


def canonical_json(value: Any) -> str:
    """Key-sorted JSON, the form fingerprints compare."""
    return json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))


def fingerprint(sweep: ResolvedSweep, arms: list[Any] | None = None) -> dict[str, Any]:
    """What the records of a run directory mean: runner, arms' configurations, scenarios' inputs."""
    chosen = arms if arms is not None else list(sweep.arms)
    return {
        "runner": runner_identity(sweep),
        "arms": {a.id: json.loads(a.canonical()) for a in chosen},
        "scenarios": {s.id: json.loads(canonical_json(dict(s.inputs))) for s in sweep.scenarios},
    }


def differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Changes that would make old runs mean something else (added arms/scenarios are fine)."""
    found: list[str] = []
    if old.get("runner") != new.get("runner"):
        found.append(f"runner: was {old.get('runner')!r}, now {new.get('runner')!r}")
    for section, label in (("arms", "arm"), ("scenarios", "scenario inputs of")):
        before, after = old.get(section, {}), new.get(section, {})
        for key in sorted(set(before) & set(after)):
            if canonical_json(before[key]) != canonical_json(after[key]):
                found.append(
                    f"{label} {key!r}: was {canonical_json(before[key])}, "
                    f"now {canonical_json(after[key])}"
                )
    return found


def merged(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The union of two compatible fingerprints (removed arms stay protected)."""
    return {
        "runner": new["runner"],
        "arms": {**old.get("arms", {}), **new["arms"]},
        "scenarios": {**old.get("scenarios", {}), **new["scenarios"]},
    }
