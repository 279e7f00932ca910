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
    """One local Ray instance shared by every Ray test of the session (under pytest-xdist, of
    the worker: each worker is a session of its own)."""
    ray = pytest.importorskip("ray")
    # address="local": a fresh instance of this session's (this xdist worker's) own, never a
    # cluster another test or worker left a trace of
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The multi-node tests first, then the other Ray tests and the packaging test (it builds a
    wheel and a venv), then the rest. The README's command (``-n 3 --dist worksteal``) hands each
    worker a contiguous share of this order and lets an idle worker take tests from the end of a
    busy one's share: the slowest start early instead of making the run's tail, and the cluster
    tests (one cluster per worker that runs any) stay together at the head of one share. The
    order is the same on every worker, as xdist requires.
    """

    def rank(item: pytest.Item) -> int:
        if item.path.name == "test_cluster.py":
            return 0
        slow = item.get_closest_marker("ray") is not None or item.path.name == "test_packaging.py"
        return 1 if slow else 2

    items.sort(key=rank)


def write_config(folder: Path, text: str, name: str = "sweep.yaml") -> Path:
    """Write a sweep file into ``folder`` and return its path."""
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path
