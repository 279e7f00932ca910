"""The chat runner against a hostile server (issue 39): a 429 that means "out of credit", a reply
that drips, a reply too large or never ending, a ``usage`` of the wrong types, a reply naming no
model. Each against the loopback server of tests/echo_server.py, through the real ``openai``
client.
"""

from __future__ import annotations

import asyncio
import json
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from counterfact import RunsFailed, compare_arms
from counterfact.exceptions import ChatReplyError
from counterfact.orchestrator.runners.chat import ChatRunner
from counterfact.orchestrator.runners.chatconfig import ChatRunnerConfig
from counterfact.probes.runner import ArmView, RunContext, ScenarioView

from ...echo_server import HUGE_BYTES, QUOTA, echo_server

ARMS: list[dict[str, Any]] = [{"id": "base"}, {"id": "big", "facets": {"model": "m-large"}}]
SCENARIOS = [{"id": "s", "inputs": {"q": "capital?"}, "reference": "Paris"}]


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "none")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def _runs(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]


def _sweep(root: str, route: str, out: Path, **settings: Any) -> None:
    """Run a two-arm sweep against ``route``."""
    runner = {"kind": "chat", "base_url": f"{root}{route}", "model": "m", "prompt": "{q}"}
    compare_arms(
        ARMS,
        runner | settings,
        samples=3,
        scenarios=SCENARIOS,
        comparator="contains",
        out=out,
    )


def _failed_alike(out: Path, kind: str) -> str:
    """The one error every recorded run failed with (asserting there is one)."""
    errors = {(r["error"]["type"], r["error"]["message"]) for r in _runs(out)}
    assert len(errors) == 1, errors
    ((found, message),) = errors
    assert found == kind, message
    return str(message)


def test_a_429_saying_the_quota_is_spent_fails_the_sweep_at_once(tmp_path: Path) -> None:
    # it was waited out as a rate limit for ever: the openai error's own code said
    # insufficient_quota, but the httpx 429 it was raised from (its __context__) said nothing
    began = time.monotonic()
    with echo_server() as root, pytest.raises(RunsFailed) as caught:
        _sweep(root, "quota/v1", tmp_path / "o")
    assert time.monotonic() - began < 20
    said = str(QUOTA["error"]["message"])
    assert said in str(caught.value) and "ChatReplyError" in str(caught.value)
    message = _failed_alike(tmp_path / "o", "ChatReplyError")
    assert message.startswith("the API refused the request for want of credit (HTTP 429")
    assert said in message and "add credit" in message
    assert all(r["rate_limited"] == 0 for r in _runs(tmp_path / "o"))


def test_a_reply_that_drips_is_cut_off_at_the_deadline(tmp_path: Path) -> None:
    # one byte every 0.2 s: httpx's read timeout (per chunk) never fires; the deadline does
    began = time.monotonic()
    with echo_server() as root, pytest.raises(RunsFailed):
        _sweep(root, "drip/v1", tmp_path / "o", timeout_s=0.5)
    took = time.monotonic() - began
    message = _failed_alike(tmp_path / "o", "ChatReplyError")
    assert message.startswith("no complete reply within runner.timeout_s=0.5 s")
    assert took < 20


def test_the_defaults_bound_every_request() -> None:
    config = ChatRunnerConfig(kind="chat", prompt="{q}", model="m")
    assert config.timeout_s == 120
    assert config.max_reply_bytes == 8 * 1024 * 1024


@pytest.mark.parametrize(
    ("route", "size"),
    [("huge/v1", "it declares 20,971,520 bytes"), ("big/v1", "its length undeclared")],
)
def test_a_reply_past_the_cap_fails_the_run_naming_the_size(
    tmp_path: Path, route: str, size: str
) -> None:
    with echo_server() as root, pytest.raises(RunsFailed):
        _sweep(root, route, tmp_path / "o", max_reply_bytes=1 << 20)
    message = _failed_alike(tmp_path / "o", "ChatReplyError")
    assert "larger than runner.max_reply_bytes=1,048,576 bytes" in message and size in message


CTX = RunContext(ScenarioView("s", {"q": "capital?"}), ArmView("base", {}), 0)


async def _peak_of_a_failed_run(warm: ChatRunner, runner: ChatRunner) -> tuple[str, int]:
    """The error of one run of ``runner`` and the peak bytes traced while it ran, after a run
    of ``warm`` has imported what a first call imports."""
    await warm(CTX)
    tracemalloc.start()
    try:
        with pytest.raises(ChatReplyError) as caught:
            await runner(CTX)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return str(caught.value), peak


@pytest.mark.parametrize("route", ["big/v1", "endless/v1"])
def test_a_reply_past_the_cap_is_not_held(route: str) -> None:
    # a 20 MiB reply was taken whole (a 100 MB one held 4.3 GB); one that never ends grew until
    # killed. The server streams 64 KiB chunks in this process: its own share is small.
    config = ChatRunnerConfig(kind="chat", prompt="{q}", model="m", max_reply_bytes=1 << 20)
    with echo_server() as root:
        warm = ChatRunner(config, f"{root}ok/v1")
        error, peak = asyncio.run(_peak_of_a_failed_run(warm, ChatRunner(config, f"{root}{route}")))
    assert "runner.max_reply_bytes=1,048,576" in error
    assert peak < 6 * (1 << 20) < HUGE_BYTES, f"peak {peak:,} bytes"


def test_a_reply_compressed_though_asked_plain_is_refused_unread(tmp_path: Path) -> None:
    # the cap counts the bytes received: a few kilobytes of gzip could inflate past any cap
    with echo_server() as root, pytest.raises(RunsFailed):
        _sweep(root, "gzip/v1", tmp_path / "o")
    message = _failed_alike(tmp_path / "o", "ChatReplyError")
    assert message.startswith("the API sent its reply compressed (gzip) though asked for it")


@pytest.mark.parametrize(
    ("case", "said"),
    [
        ("string", "usage.prompt_tokens is a string 'abc', not a whole number of tokens"),
        ("list", "usage.prompt_tokens is a list [1], not a whole number of tokens"),
        ("object", "usage.prompt_tokens is an object {}, not a whole number of tokens"),
        ("not-an-object", "usage is a list [1], not an object of counts"),
    ],
)
def test_usage_of_the_wrong_type_names_the_field(tmp_path: Path, case: str, said: str) -> None:
    with echo_server() as root, pytest.raises(RunsFailed):
        _sweep(root, f"usage/{case}/v1", tmp_path / "o")
    message = _failed_alike(tmp_path / "o", "RunnerReturnError")
    assert message == f"the API's reply is malformed: {said}" + (
        "" if case == "not-an-object" else " (the run's cost cannot be counted)"
    )


def test_a_reply_naming_no_model_reports_the_model_asked_for(tmp_path: Path) -> None:
    # every arm declaring model was judged baseline/arm-facet-not-reported: "report `model` in
    # the manifest", advice a sweep file cannot follow
    with echo_server() as root:
        result = compare_arms(
            ARMS,
            {"kind": "chat", "base_url": f"{root}nomodel/v1", "model": "m", "prompt": "{q}"},
            samples=3,
            scenarios=SCENARIOS,
            comparator="contains",
            out=tmp_path / "o",
        )
    row = result.row("big")
    assert row.application.applied is True, row.claim
    assert row.reason not in ("arm-facet-not-reported", "baseline-facet-not-reported")
    manifests = {r["arm"]: r["manifest"] for r in _runs(tmp_path / "o")}
    assert manifests["big"]["model"] == "m-large" and manifests["base"]["model"] == "m"
    assert manifests["big"]["served_model"] is None  # the server did not say what it served
