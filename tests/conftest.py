"""Shared fixtures: scripted runners and one Ray instance per test session."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from counterfact import RunContext, RunResult

TESTS = Path(__file__).resolve().parent


def scripted(
    outputs: Mapping[str, Any], manifests: Mapping[str, Any] | None = None
) -> Callable[[RunContext], RunResult]:
    """A runner whose output is scripted per arm: a string, a list (one per seed), or a callable.

    A list entry that is an Exception instance is raised for that seed.
    """

    def runner(ctx: RunContext) -> RunResult:
        spec = outputs[ctx.arm.id]
        value = spec[ctx.seed] if isinstance(spec, list) else spec
        if isinstance(value, BaseException):
            raise value
        if callable(value):
            value = value(ctx)
        manifest = (manifests or {}).get(ctx.arm.id)
        return RunResult(output=value, manifest=manifest, cost={"tokens": 10.0 + ctx.seed})

    return runner


@pytest.fixture(scope="session")
def ray_instance() -> Iterator[None]:
    """One local Ray instance shared by every Ray test of the session."""
    ray = pytest.importorskip("ray")
    # address="local": a fresh instance of this session's (this xdist worker's) own, never a
    # cluster another test or worker left a trace of
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


RAY_MODULES = frozenset(
    {
        "e2e/test_cluster.py",
        "e2e/test_cluster_kill.py",
        "orchestrator/engine/executors/test_ray_address.py",
        "test_packaging.py",
    }
)
"""Modules (paths under tests/) that start Ray clusters or Ray-backed commands in other
processes."""


def _under_tests(path: Path) -> str:
    """``path`` relative to tests/, with forward slashes (the whole path when outside tests/)."""
    resolved = path.resolve()
    return resolved.relative_to(TESTS).as_posix() if resolved.is_relative_to(TESTS) else str(path)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``-n 2 --dist loadgroup``), every test that starts or uses Ray runs
    on one worker, one after another: two Ray instances on a 2-core machine starve each other's
    timing-sensitive tests. The Ray group goes first, so it is not the run's tail.
    """
    if not config.pluginmanager.hasplugin("xdist") or config.getoption("dist", "no") == "no":
        return
    for item in items:
        if item.get_closest_marker("ray") or _under_tests(item.path) in RAY_MODULES:
            item.add_marker(pytest.mark.xdist_group("ray"))
    items.sort(key=lambda i: i.get_closest_marker("xdist_group") is None)


def write_config(folder: Path, text: str, name: str = "sweep.yaml") -> Path:
    """Write a sweep file into ``folder`` and return its path."""
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path
