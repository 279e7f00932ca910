"""The worker on its own: one run, its retries, and a result that cannot be recorded."""

from __future__ import annotations

from counterfact.orchestrator.engine.calling.worker import (
    RETRY_BASE_S,
    Attempts,
    RetryPolicy,
    execute_run,
)
from counterfact.probes.runner import ArmView, RunContext, RunResult, ScenarioView

CTX = RunContext(ScenarioView("s", {}), ArmView("a", {}), 3)


class Flaky:
    def __init__(self, failures: int, exc: type[Exception] = ConnectionError) -> None:
        self.failures, self.exc, self.calls = failures, exc, 0

    def __call__(self, ctx: RunContext) -> RunResult:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.exc("down")
        return RunResult(output=f"seed {ctx.seed}", cost={"tokens": 5})


def test_a_listed_exception_is_retried_and_attempts_counted() -> None:
    runner = Flaky(failures=2)
    rec = execute_run(runner, CTX, RetryPolicy(retries=2, retry_on=frozenset({"OSError"})))
    assert rec.ok and rec.output == "seed 3" and rec.attempts == 3 and rec.cost == {"tokens": 5}


def test_retries_run_out_and_the_error_is_recorded() -> None:
    runner = Flaky(failures=5)
    rec = execute_run(runner, CTX, RetryPolicy(retries=1, retry_on=frozenset({"ConnectionError"})))
    assert not rec.ok and rec.attempts == 2 and runner.calls == 2
    assert rec.error is not None and (rec.error.type, rec.error.message) == (
        "ConnectionError",
        "down",
    )


def test_the_jitter_generator_is_made_only_when_a_retry_waits() -> None:
    # random.Random() seeds itself from the OS: per run it cost more than an instant runner
    tries = Attempts(RetryPolicy(retries=1, retry_on=frozenset({"OSError"})))
    tries.calls = 1
    assert tries.after(ValueError("not listed")) is None
    assert tries.rng is None  # a run that is not retried never makes one
    wait = tries.after(ConnectionError("listed"))
    assert wait is not None and 0.0 <= wait <= RETRY_BASE_S
    assert tries.rng is not None


def test_an_unlisted_exception_is_not_retried() -> None:
    runner = Flaky(failures=1, exc=ValueError)
    rec = execute_run(runner, CTX, RetryPolicy(retries=3, retry_on=frozenset({"OSError"})))
    assert runner.calls == 1 and rec.error is not None and rec.error.type == "ValueError"


def test_a_bad_return_is_one_failed_run_not_a_crash() -> None:
    rec = execute_run(lambda ctx: {"output": "x", "cost": {"usd": float("nan")}}, CTX)
    assert rec.error is not None and rec.output is None
