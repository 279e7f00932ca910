"""The served folders and the run directories found in them, searched again at most once a
second (a sweep started after the viewer appears on the next page load).

Indexes are kept for the run directories browsed most recently: at most
:attr:`Limits.count` of them and :attr:`Limits.bytes` of estimated memory
(:meth:`RunView.footprint`). Browsing past either drops the least recently used one's indexes
and parsed records (its next page indexes it again); the one just asked for is always kept.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

from counterfact.orchestrator.view.files import COMPARE_PREFIX, discover
from counterfact.orchestrator.view.rundir import RunView

RESCAN_S = 1.0


@dataclass(frozen=True)
class Limits:
    """How many run directories' indexes a viewer keeps."""

    count: int = 8
    """Run directories with indexes held."""
    bytes: int = 1 << 30
    """Estimated memory of the indexes held (a 10,000 questions x 4 arms x 5 seeds directory:
    about 65 MiB with its summary read)."""


class Catalog:
    """The run directories a viewer serves: under ``root``, and under ``compare`` if given."""

    def __init__(self, root: Path, compare: Path | None = None, limits: Limits = Limits()) -> None:
        self.root = root.resolve()
        self.compare = compare.resolve() if compare is not None else None
        self.limits = limits
        self.evicted = 0
        """Run directories whose indexes were dropped to stay within :attr:`limits`."""
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
        """The run directory with this id; None for any other string (``..``, a path ...).
        Asking for one may evict the indexes of the least recently used others.
        """
        with self._lock:
            found = self._views.get(run_id)
        if found is None:
            found = next((r for r in self.runs() if r.id == run_id), None)
        if found is not None:
            with self._lock:
                self._evict(found)
        return found

    def trim(self) -> None:
        """Evict as :meth:`get` does, keeping none in particular (after the list, which indexes
        every running sweep a little to name its arms).
        """
        with self._lock:
            self._evict(None)

    def _evict(self, keep: RunView | None) -> None:
        """Replace the least recently used views by fresh ones (no index) until those holding
        anything fit :attr:`limits`; ``keep`` is never evicted.
        """
        held = [v for v in self._views.values() if v is not keep and v.footprint() > 0]
        held.sort(key=lambda v: v.used)
        kept = 0 if keep is None else keep.footprint()
        count, size = len(held) + (keep is not None), sum(v.footprint() for v in held) + kept
        for view in held:
            if count <= self.limits.count and size <= self.limits.bytes:
                break
            count, size = count - 1, size - view.footprint()
            view.close()
            self._views[view.id] = RunView(view.entry)
            self.evicted += 1

    def first_pair(self) -> tuple[str, str] | None:
        """(root's run, compare's run) when ``--compare`` names one run directory each."""
        runs = self.runs()
        mine = [r.id for r in runs if not r.id.startswith(COMPARE_PREFIX)]
        theirs = [r.id for r in runs if r.id.startswith(COMPARE_PREFIX)]
        if len(mine) == 1 and len(theirs) == 1:
            return theirs[0], mine[0]
        return None
