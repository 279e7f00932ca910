"""Errors carry what they are about and their exit code (issue 17 item 10)."""

from __future__ import annotations

from pathlib import Path

import pytest

from counterfact import RunDirectoryError, compare_arms
from counterfact.exceptions import (
    BudgetExhausted,
    ConfigError,
    CounterfactError,
    RecordWriteError,
    ResumeConflictError,
    RunsFailed,
    SweepInterrupted,
)


@pytest.mark.parametrize(
    ("cls", "code"),
    [
        (CounterfactError, 1),
        (RunsFailed, 1),
        (ConfigError, 2),
        (RunDirectoryError, 2),
        (ResumeConflictError, 2),
        (BudgetExhausted, 4),
        (SweepInterrupted, 130),
        (RecordWriteError, 1),
    ],
)
def test_every_error_says_its_exit_code(cls: type[CounterfactError], code: int) -> None:
    assert cls.exit_code == code


def test_a_run_directory_error_carries_the_directory(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(RunDirectoryError) as caught:
        compare_arms(
            [{"id": "base"}, {"id": "alt", "facets": {"k": 1}}],
            lambda ctx: "x",
            executor="local",
            out=blocker,
        )
    assert caught.value.run_dir == blocker
    assert "exists and is not a directory" in str(caught.value)
