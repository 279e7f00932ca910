"""The opt-in run cache shared across sweeps (``cache_dir`` / ``--cache DIR``).

A successful run is stored under a key made of the runner's identity
(:func:`~counterfact.orchestrator.engine.loader.runner_identity`), the scenario's inputs, the arm's
canonical configuration (facets, ablations, restorations — not its id) and the seed. A later
sweep that plans the same (configuration, inputs, seed) under any arm or scenario id reads the
result back instead of running it; its record says ``from_cache: true``. Failed runs are never
cached. Entries are JSON files ``<dir>/<2 hex>/<64 hex>.json`` written atomically, so several
sweeps may share one cache directory.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import ValidationError

from counterfact.orchestrator.storage.atomic import write_atomic
from counterfact.orchestrator.storage.fingerprints import canonical_json
from counterfact.orchestrator.storage.runlog import RUNS_FILE, RunLogReader
from counterfact.probes.arms import ArmSpec
from counterfact.probes.records import RunRecord
from counterfact.probes.runner import RunContext


def _key(runner: object, inputs: object, arm: object, seed: int) -> str:
    payload = {"runner": runner, "inputs": inputs, "arm": arm, "seed": seed}
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()


class RunCache:
    """Content-addressed storage of successful run results."""

    def __init__(self, root: Path, runner_identity: str) -> None:
        self.root = root
        self.runner_identity = runner_identity

    def key(self, ctx: RunContext, arm: ArmSpec) -> str:
        """The entry's SHA-256: runner identity, scenario inputs, arm configuration, seed."""
        inputs = json.loads(canonical_json(dict(ctx.scenario.inputs)))
        return _key(self.runner_identity, inputs, json.loads(arm.canonical()), ctx.seed)

    def adopt(self, run_dir: Path) -> int:
        """Store the successful runs of another run directory (one moved aside by ``--fresh``),
        keyed by what its ``sweep.json`` says they mean; runs of another runner identity never
        match this sweep's keys. Returns how many were stored.
        """
        meaning = run_dir / "sweep.json"
        if not meaning.is_file():
            return 0
        old = json.loads(meaning.read_text(encoding="utf-8"))
        if old.get("runner") != self.runner_identity:
            return 0  # another runner's results: this sweep could never use them
        arms, scenarios = old.get("arms", {}), old.get("scenarios", {})
        stored = 0
        for record in RunLogReader(run_dir / RUNS_FILE):
            if not record.ok or record.arm not in arms or record.scenario not in scenarios:
                continue
            key = _key(old.get("runner"), scenarios[record.scenario], arms[record.arm], record.seed)
            path = self._path(key)
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(path, record.model_dump_json())
                stored += 1
        return stored

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, ctx: RunContext, arm: ArmSpec) -> RunRecord | None:
        """The cached result of this run under this sweep's ids, or None."""
        path = self._path(self.key(ctx, arm))
        if not path.is_file():
            return None
        try:
            stored = RunRecord.model_validate_json(path.read_bytes())
        except (ValidationError, OSError):
            return None  # a damaged entry is a miss; the run happens and rewrites it
        return stored.model_copy(
            update={"scenario": ctx.scenario.id, "arm": ctx.arm.id, "from_cache": True}
        )

    def put(self, ctx: RunContext, arm: ArmSpec, record: RunRecord) -> None:
        """Store a successful run (failed runs are not cached)."""
        if not record.ok:
            return
        path = self._path(self.key(ctx, arm))
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, record.model_dump_json())
