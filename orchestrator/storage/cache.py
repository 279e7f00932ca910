"""The opt-in run cache shared across sweeps (``cache_dir`` / ``--cache DIR``).

A successful run is stored under a key made of the runner's identity
(:func:`~counterfact.orchestrator.engine.loading.loader.runner_identity`), the scenario's inputs,
the arm's canonical configuration (facets, ablations, restorations — not its id) and the seed. A
later sweep that plans the same (configuration, inputs, seed) under any arm or scenario id reads the
result back instead of running it; its record says ``from_cache: true``. Failed runs are never
cached. Entries are JSON files ``<dir>/<2 hex>/<64 hex>.json`` written atomically, so several
sweeps may share one cache directory.

Each entry holds the key's inputs (runner identity, scenario inputs, arm configuration, seed)
beside the record, and the SHA-256 of the record's JSON. Every hit is checked: an entry whose
inputs are not the ones asked for, whose seed is another, or whose record does not hash to what
was stored (an edited file) is not used — the run is executed and the entry rewritten — and is
counted (:attr:`RunCache.rejected`, ``cache_entries_rejected`` in ``summary.json``). So is an
entry that is not a regular file (a FIFO, a device, a symlink, a directory) or that is larger
than :data:`MAX_ENTRY_BYTES`: it is never opened for reading, so it cannot hang the sweep or
fill its memory; a run whose entry would be larger is not cached. The check
catches damage and careless edits, not an adversary who recomputes the hash: a shared cache
directory is trusted input, like the runner's own code.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import ValidationError

from counterfact.exceptions import RunDirectoryError
from counterfact.orchestrator.storage.atomic import write_atomic, writing
from counterfact.orchestrator.storage.boundedread import read_regular
from counterfact.orchestrator.storage.dirchecks import first_line_digest, read_fingerprint
from counterfact.orchestrator.storage.recordfiles import RunLogReader
from counterfact.probes.arms import ArmSpec
from counterfact.probes.runner import RunContext
from counterfact.records.fingerprint import canonical_json
from counterfact.records.paths import RunPaths
from counterfact.records.runs import RunRecord

ENTRY_VERSION = 2
"""1: a bare run record (written before entries were checked: never used now, re-run once)."""

MAX_ENTRY_BYTES = 64 << 20
"""The largest entry read back (64 MiB); a run whose entry would be larger is not cached."""


def _payload(runner: object, inputs: object, arm: object, seed: int) -> dict[str, object]:
    return {"runner": runner, "inputs": inputs, "arm": arm, "seed": seed}


def _key(payload: dict[str, object]) -> str:
    """The SHA-256 of what a key is made of."""
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()


def _entry(payload: dict[str, object], record: RunRecord) -> str:
    """An entry's text: what the key was made of, the record, and the record's hash."""
    text = record.model_dump_json()
    digest = hashlib.sha256(text.encode()).hexdigest()
    body = {"entry_version": ENTRY_VERSION, "key": payload, "sha256": digest, "record": text}
    return json.dumps(body)


def _verified(raw: bytes, payload: dict[str, object]) -> RunRecord | None:
    """The entry's record when it is intact and is the run asked for; else None."""
    try:
        body = json.loads(raw)
        text = body["record"]
        intact = hashlib.sha256(text.encode()).hexdigest() == body["sha256"]
        same = canonical_json(body["key"]) == canonical_json(payload)
        record = RunRecord.model_validate_json(text) if intact and same else None
    except (ValueError, TypeError, KeyError, AttributeError, ValidationError):
        return None
    if record is None or record.seed != payload["seed"] or not record.ok:
        return None
    return record


class RunCache:
    """Content-addressed storage of successful run results."""

    def __init__(self, root: Path, runner_identity: str) -> None:
        self.root = root
        self.runner_identity = runner_identity
        self.rejected = 0
        """Entries found but not used: damaged, edited, or not the run asked for."""

    def key(self, ctx: RunContext, arm: ArmSpec) -> str:
        """The entry's SHA-256: runner identity, scenario inputs, arm configuration, seed."""
        return _key(self._inputs(ctx, arm))

    def _inputs(self, ctx: RunContext, arm: ArmSpec) -> dict[str, object]:
        inputs = json.loads(canonical_json(dict(ctx.scenario.inputs)))
        return _payload(self.runner_identity, inputs, json.loads(arm.canonical()), ctx.seed)

    def adopt(self, run_dir: Path) -> int:
        """Store the successful runs of another run directory (one moved aside by ``--fresh``),
        keyed by what its ``sweep.json`` says they mean; runs of another runner identity never
        match this sweep's keys. Returns how many were stored.
        """
        paths = RunPaths(run_dir)
        meaning = paths.fingerprint
        if not meaning.is_file():
            return 0
        try:  # damaged, or a runs.jsonl copied in from elsewhere: nothing of it is adopted
            old = read_fingerprint(meaning)
            first_line_digest(paths.runs, old.runs_first_line_sha256)
        except RunDirectoryError:
            return 0
        if old.runner != self.runner_identity:
            return 0  # another runner's results: this sweep could never use them
        arms, scenarios = old.arms, old.scenarios
        stored = 0
        for record in RunLogReader(paths.runs):
            if not record.ok or record.arm not in arms or record.scenario not in scenarios:
                continue
            payload = _payload(
                old.runner, scenarios[record.scenario], arms[record.arm], record.seed
            )
            path = self._path(_key(payload))
            if not path.exists():
                with writing(path):
                    path.parent.mkdir(parents=True, exist_ok=True)
                    write_atomic(path, _entry(payload, record))
                stored += 1
        return stored

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, ctx: RunContext, arm: ArmSpec) -> RunRecord | None:
        """The cached result of this run under this sweep's ids, or None (also for an entry
        that fails its check: counted in :attr:`rejected`).
        """
        payload = self._inputs(ctx, arm)
        path = self._path(_key(payload))
        try:
            raw = read_regular(path, MAX_ENTRY_BYTES)
        except FileNotFoundError:
            return None  # no entry: a miss
        except OSError:  # a FIFO, device, link or directory, too large, or unreadable
            self.rejected += 1
            return None
        stored = _verified(raw, payload)
        if stored is None:
            self.rejected += 1  # the run happens and rewrites the entry
            return None
        return RunRecord.model_validate(
            stored.model_dump()
            | {"scenario": ctx.scenario.id, "arm": ctx.arm.id, "from_cache": True}
        )

    def put(self, ctx: RunContext, arm: ArmSpec, record: RunRecord) -> None:
        """Store a successful run (failed runs are not cached)."""
        if not record.ok:
            return
        payload = self._inputs(ctx, arm)
        path = self._path(_key(payload))
        entry = _entry(payload, record)
        if len(entry) > MAX_ENTRY_BYTES:  # ASCII JSON: one byte a character; never read back
            return
        with writing(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, entry)
