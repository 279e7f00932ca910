"""Fuzz: hostile *runners* through the CLI (issue 27). Whatever a runner raises, does to its event
loop or returns, every sweep ends within a hard bound, with every run recorded (failed or ok),
exit code 0 or 1, and no traceback on stderr.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.hostile_runners import OUTPUTS, RAISED

from .test_loopguard import sweep

SYNC_ACTS = sorted(RAISED) + sorted(OUTPUTS) + ["sleep"]
ASYNC_ACTS = [
    *SYNC_ACTS,
    "stop-loop",
    "close-loop",
    "block",
    "stop-later",
    "raise-in-callback",
    "cancel-others",
]
EXECUTORS = ["{kind: local}", "{kind: local, concurrency: 4}", "{kind: local, timeout_s: 30}"]

cases = st.one_of(
    st.tuples(st.just("sync_hostile"), st.sampled_from(SYNC_ACTS), st.sampled_from(EXECUTORS)),
    st.tuples(st.just("async_hostile"), st.sampled_from(ASYNC_ACTS), st.just("{kind: local}")),
)


EXAMPLES = [
    (("sync_hostile", "huge", "{kind: local}"), False),
    (("async_hostile", "surrogate", "{kind: local}"), True),
    (("sync_hostile", "nul", "{kind: local, concurrency: 4}"), True),
    (("async_hostile", "ansi", "{kind: local}"), True),
    (("async_hostile", "block", "{kind: local}"), True),
    (("async_hostile", "generator-exit", "{kind: local}"), True),
]
"""Cases that must always run, as separate tests (pytest-xdist spreads them over its workers)."""


def check_case(folder: Path, case: tuple[str, str, str], every: bool) -> None:
    runner, what, executor = case
    if executor.endswith("timeout_s: 30}") and runner == "sync_hostile":
        executor = "{kind: local, concurrency: 2, timeout_s: 30}"  # timeout_s needs overlap
    every = every and what != "huge"  # one 50 MB output is the point; six are only slow
    code, err, records = sweep(folder, runner, what, executor, every=every)
    assert code in (0, 1), (code, err[-3000:])
    assert "Traceback" not in err, err[-3000:]
    assert sorted((r["arm"], r["seed"]) for r in records) == [
        (arm, seed) for arm in ("alt", "base") for seed in range(3)
    ], err[-3000:]


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=cases, every=st.booleans())
def test_a_hostile_runner_ends_its_sweep_clean(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[str, str, str], every: bool
) -> None:
    check_case(tmp_path_factory.mktemp("fuzz"), case, every)


@pytest.mark.parametrize(("case", "every"), EXAMPLES, ids=[case[1] for case, _ in EXAMPLES])
def test_a_known_hostile_runner_ends_its_sweep_clean(
    tmp_path: Path, case: tuple[str, str, str], every: bool
) -> None:
    check_case(tmp_path, case, every)
