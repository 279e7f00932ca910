"""Cache entries that are not regular files, or too large, are rejected, never read (issue 27
item 4): a FIFO planted in the cache hung ``RunCache.get``; a link to ``/dev/zero`` read until
``MemoryError``. Each case runs in a child with a hard timeout and a memory limit, so a
regression fails instead of hanging the suite or filling the machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HARD_TIMEOUT_S = 60

CHILD = textwrap.dedent(
    """
    import os, resource, sys
    from pathlib import Path
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    from counterfact.orchestrator.storage import cache as cachemod
    from counterfact.orchestrator.storage.cache import RunCache
    from counterfact.probes.arms import ArmSpec
    from counterfact.probes.runner import RunContext, ScenarioView

    root, plant = Path(sys.argv[1]), sys.argv[2]
    cache = RunCache(root, "r@version:1")
    arm = ArmSpec("alt", {"m": "big"})
    ctx = RunContext(ScenarioView("s", {"q": "x"}), arm.view(), 0)
    path = cache._path(cache.key(ctx, arm))
    path.parent.mkdir(parents=True, exist_ok=True)
    if plant == "fifo":
        os.mkfifo(path)
    elif plant == "zero":
        path.symlink_to("/dev/zero")
    elif plant == "dir":
        path.mkdir()
    elif plant == "huge":
        with path.open("wb") as f:
            f.truncate(cachemod.MAX_ENTRY_BYTES + 1)
    print(cache.get(ctx, arm), cache.rejected)
    """
)


def planted(tmp_path: Path, plant: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "cache"), plant],
        capture_output=True,
        text=True,
        timeout=HARD_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    return done.stdout.strip()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_the_cache_is_a_rejected_entry_not_a_hang(tmp_path: Path) -> None:
    assert planted(tmp_path, "fifo") == "None 1"


def test_a_link_to_dev_zero_is_a_rejected_entry_not_a_memory_error(tmp_path: Path) -> None:
    assert planted(tmp_path, "zero") == "None 1"


def test_a_directory_in_place_of_an_entry_is_rejected(tmp_path: Path) -> None:
    assert planted(tmp_path, "dir") == "None 1"


def test_an_entry_over_the_size_limit_is_rejected_unread(tmp_path: Path) -> None:
    assert planted(tmp_path, "huge") == "None 1"


def test_a_missing_entry_is_a_plain_miss(tmp_path: Path) -> None:
    assert planted(tmp_path, "none") == "None 0"
