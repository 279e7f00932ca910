"""The Inspect AI logs both importer test modules judge, written once per session (once per
pytest-xdist worker) instead of once per module."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One log per task of ``test_inspect_logs`` (good, bad, short, fewer_epochs), by task name,
    written by ``inspect_ai.eval`` itself with the ``mockllm/model`` provider."""
    from inspect_ai import eval as inspect_eval

    from tests.orchestrator.importers.test_inspect_logs import bad, fewer_epochs, good, short

    folder = tmp_path_factory.mktemp("inspect")
    written = inspect_eval(
        [good(), bad(), short(), fewer_epochs()],
        model="mockllm/model",
        log_dir=str(folder),
        display="none",
    )
    return {log.eval.task: Path(log.location) for log in written}
