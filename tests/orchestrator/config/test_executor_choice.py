"""The default executor fits the work: an API-bound sweep without a kind or an address runs
in-process (no Ray started); an explicit kind, an address and a CPU-bound sweep keep Ray.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from counterfact import compare_arms
from counterfact.orchestrator.config.components import ExecutorConfig
from counterfact.orchestrator.config.executor_choice import ExecutorChoice, choose_executor
from counterfact.orchestrator.config.loading import load_sweep
from counterfact.probes.runner import RunContext

from ...conftest import TESTS, write_config

ARMS = [{"id": "base"}, {"id": "alt", "facets": {"model": "m2"}}]


async def _async_runner(ctx: RunContext) -> str:
    return "yes"


def _sync_runner(ctx: RunContext) -> str:
    return "yes"


def _choice(section: dict[str, Any], runner: Any, env: dict[str, str] | None = None) -> Any:
    return choose_executor(ExecutorConfig.model_validate(section), runner, env or {})


def test_an_async_runner_without_a_kind_runs_in_process() -> None:
    assert _choice({}, _async_runner) == ExecutorChoice(
        "local", "api-bound default", "an async def runner; in-process, no Ray started"
    )


def test_concurrency_without_a_kind_runs_in_process() -> None:
    found = _choice({"concurrency": 50}, _sync_runner)
    assert (found.kind, found.chosen) == ("local", "api-bound default")
    assert "executor.concurrency 50" in found.note()


def test_a_sync_runner_without_concurrency_keeps_ray() -> None:
    found = _choice({}, _sync_runner)
    assert (found.kind, found.chosen) == ("ray", "cpu default")


@pytest.mark.parametrize("spelled", [{"kind": "ray"}, "ray"])
def test_an_explicit_kind_is_kept(spelled: Any) -> None:
    found = choose_executor(ExecutorConfig.model_validate(spelled), _async_runner, {})
    assert (found.kind, found.chosen) == ("ray", "explicit")


def test_an_address_keeps_ray() -> None:
    found = _choice({"address": "auto", "concurrency": 10}, _async_runner)
    assert (found.kind, found.chosen) == ("ray", "address")


def test_ray_address_in_the_environment_keeps_ray() -> None:
    found = _choice({}, _async_runner, {"RAY_ADDRESS": "10.0.0.5:6379"})
    why = "RAY_ADDRESS=10.0.0.5:6379 is set: joining that cluster"
    assert (found.kind, found.chosen, found.why) == ("ray", "address", why)


@pytest.mark.parametrize("option", [{"max_in_flight": 500}, {"infra_retries": 3}])
def test_an_option_the_local_executor_ignores_keeps_ray(option: dict[str, int]) -> None:
    found = _choice({"concurrency": 10, **option}, _async_runner)
    assert (found.kind, found.chosen) == ("ray", "ray options")


def test_join_timeout_s_alone_starts_no_ray() -> None:
    # it bounds joining a cluster; without an address there is none to join
    assert _choice({"join_timeout_s": 60}, _async_runner).kind == "local"
    assert _choice({"join_timeout_s": 60, "address": "auto"}, _async_runner).kind == "ray"


def test_an_option_only_ray_honours_keeps_ray() -> None:
    found = _choice({"num_cpus": 2}, _async_runner)
    assert (found.kind, found.chosen) == ("ray", "ray options")
    assert "executor.num_cpus applies to ray only" in found.note()


PROBE = """
import json, sys
from counterfact.orchestrator.cli import main
try:
    main(sys.argv[1:], standalone_mode=False)
finally:
    print(json.dumps("ray" in sys.modules), file=sys.stderr)
"""


def test_the_cli_runs_an_async_sweep_without_importing_ray(tmp_path: Path) -> None:
    path = write_config(
        tmp_path,
        f"name: lean\nrunner: {TESTS / 'io_runners.py'}:async_answer\nsamples: 2\n"
        "arms:\n  - id: base\n  - id: alt\n    facets: {model: m2}\n",
    )
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "run", str(path), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stderr.strip().splitlines()[-1]) is False  # Ray never imported
    assert "note: executor: local (api-bound default: an async def runner" in done.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["executor"] == {"kind": "local", "chosen": "api-bound default"}
    runs = [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines() if x.strip()]
    assert runs and {r["node"] for r in runs} == {"local"}


def test_the_python_api_records_its_choice() -> None:
    result = compare_arms(ARMS, _async_runner, samples=2)
    assert result.summary.executor is not None
    assert result.summary.executor.model_dump() == {"kind": "local", "chosen": "api-bound default"}
    assert {r.node for r in result.runs} == {"local"}


@pytest.mark.ray
@pytest.mark.usefixtures("ray_instance")
def test_an_explicit_ray_kind_keeps_ray_for_an_async_runner() -> None:
    result = compare_arms(ARMS, _async_runner, samples=2, executor="ray")
    assert result.summary.executor is not None
    assert result.summary.executor.model_dump() == {"kind": "ray", "chosen": "explicit"}
    assert all(r.node not in (None, "local") for r in result.runs)


def test_older_summaries_load_without_an_executor_record() -> None:
    from counterfact.records.execution import ExecutionRecord
    from counterfact.records.summary import SweepSummary

    assert SweepSummary.model_fields["executor"].default is None
    assert ExecutionRecord.model_fields["timings"].default is None


def test_join_timeout_s_reaches_the_ray_executor(tmp_path: Path) -> None:
    from counterfact.orchestrator.engine.executors.registry import make_executor

    sweep = load_sweep(
        write_config(
            tmp_path,
            f"name: j\nrunner: {TESTS / 'runners.py'}:echo_arm\narms: [{{id: base}}, {{id: b, facets: {{x: 1}}}}]\n"
            "executor: {kind: ray, address: auto, join_timeout_s: 7.5}\n",
        )
    )
    executor = make_executor("ray", sweep.executor_options)
    assert executor.options.join_timeout_s == 7.5  # type: ignore[attr-defined]
    assert make_executor("ray").options.join_timeout_s == 20.0  # type: ignore[attr-defined]
