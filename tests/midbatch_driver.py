"""A sweep driver that SIGKILLs itself while it counts a batch: run by
``tests/e2e/test_faults.py`` from the repository root as

    python -m tests.midbatch_driver SWEEP_FILE OUT_DIR AFTER NOTE_FILE

At every count (the progress line's) it reads ``runs.jsonl`` from outside the store. Once
``AFTER`` runs are counted and the file holds more lines than that — a batch flushed whole and
counted in part — or at once if it ever holds fewer (a run counted before its line was flushed),
it writes ``<counted> <lines>`` to ``NOTE_FILE`` and kills itself with SIGKILL: no cleanup, no
flush, no handler runs.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from counterfact.orchestrator.config.loading import load_sweep
from counterfact.orchestrator.drivers.sweep import run_sweep
from counterfact.orchestrator.engine.watching.progress import NoProgress


class KillMidBatch(NoProgress):
    """Counts runs as the CLI's progress line does; SIGKILLs the process mid-batch."""

    def __init__(self, runs: Path, after: int, note: Path) -> None:
        self.runs, self.after, self.note = runs, after, note
        self.counted = 0

    def advance(self, ok: bool) -> None:
        self.counted += 1
        lines = len(self.runs.read_bytes().splitlines())
        if lines < self.counted or (self.counted >= self.after and lines > self.counted):
            self.note.write_text(f"{self.counted} {lines}", encoding="utf-8")
            os.kill(os.getpid(), signal.SIGKILL)


def main() -> None:
    config, out, after, note = sys.argv[1:5]
    progress = KillMidBatch(Path(out) / "runs.jsonl", int(after), Path(note))
    run_sweep(load_sweep(config), run_dir=Path(out), progress=progress)


if __name__ == "__main__":
    main()
