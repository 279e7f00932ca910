"""The served folders and the run directories found in them, searched again at most once a
second (a sweep started after the viewer appears on the next page load).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from counterfact.orchestrator.view.files import COMPARE_PREFIX, discover
from counterfact.orchestrator.view.rundir import RunView

RESCAN_S = 1.0


class Catalog:
    """The run directories a viewer serves: under ``root``, and under ``compare`` if given."""

    def __init__(self, root: Path, compare: Path | None = None) -> None:
        self.root = root.resolve()
        self.compare = compare.resolve() if compare is not None else None
        self._lock = threading.Lock()
        self._views: dict[str, RunView] = {}
        self._scanned = -RESCAN_S

    def _rescan(self) -> None:
        found = discover(self.root)
        if self.compare is not None:
            found += discover(self.compare, COMPARE_PREFIX)
        views = {}
        for entry in found:
            known = self._views.get(entry.id)
            same = known is not None and known.entry == entry
            views[entry.id] = known if same and known is not None else RunView(entry)
        self._views = views
        self._scanned = time.monotonic()

    def runs(self, *, fresh: bool = False) -> list[RunView]:
        """Every run directory, in id order (searched again when older than a second)."""
        with self._lock:
            if fresh or time.monotonic() - self._scanned >= RESCAN_S:
                self._rescan()
            return list(self._views.values())

    def get(self, run_id: str) -> RunView | None:
        """The run directory with this id; None for any other string (``..``, a path ...)."""
        with self._lock:
            found = self._views.get(run_id)
        if found is not None:
            return found
        return next((r for r in self.runs() if r.id == run_id), None)

    def first_pair(self) -> tuple[str, str] | None:
        """(root's run, compare's run) when ``--compare`` names one run directory each."""
        runs = self.runs()
        mine = [r.id for r in runs if not r.id.startswith(COMPARE_PREFIX)]
        theirs = [r.id for r in runs if r.id.startswith(COMPARE_PREFIX)]
        if len(mine) == 1 and len(theirs) == 1:
            return theirs[0], mine[0]
        return None
