"""What a run directory's records mean (``sweep.json``), and what a new plan would change.

A :class:`Fingerprint` holds the runner's identity, each arm's canonical configuration, each
scenario's inputs and, for a sequential sweep, its :class:`SequentialDesign`. A resume may add
arms and scenarios; it may not change any of those for an id that already has records
(:func:`differences` lists each change), nor resume another sweep's directory
(:func:`owner_conflict`). Pydantic and the standard library only: a tool can read ``sweep.json``
without the engine.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainValidator

FINGERPRINT_SCHEMA_VERSION = 1
"""The ``schema_version`` ``sweep.json`` is written with."""


def canonical_json(value: Any) -> str:
    """Key-sorted JSON, the form fingerprints compare."""
    return json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))


def _json_object(value: Any) -> dict[str, Any]:
    """A JSON object taken as it is (its values are JSON already: read from a file, or made by
    the fingerprint's builder); checked for its kind only, so 10^6 scenarios cost no copy.
    """
    if not isinstance(value, dict):
        msg = f"must be a JSON object, got {type(value).__name__}"
        raise ValueError(msg)  # pydantic makes it a ValidationError
    return value


JsonObjects = Annotated[
    dict[str, Any], PlainValidator(_json_object, json_schema_input_type=dict[str, Any])
]
"""Values by id, each a JSON value (an arm's configuration, a scenario's inputs)."""


class SequentialDesign(BaseModel):
    """What a sequential sweep's stopping decisions depend on, besides the seeds and the cap
    (raising ``max_samples`` on resume is how undecided arms continue). Every field may be
    missing in a file an older version wrote; keys this version does not know are kept.
    """

    model_config = ConfigDict(frozen=True, extra="allow")

    samples: int | None = None
    """The first wave's seeds (``samples``)."""
    wave: int | None = None
    """Seeds per later wave."""
    alpha: float | None = None
    adjust: str | None = None
    family: str | None = None
    pairing: str | None = None
    arms: list[str] | None = None
    """Every arm id, sorted: the family the stop threshold covers."""
    alternative: str | None = None
    """The e-process's direction; recorded only when not the default ``greater`` (so a
    directory written before it existed still resumes)."""
    min_effect: float | None = None
    """The futility effect; recorded only when set."""

    def as_data(self) -> dict[str, Any]:
        """The design as ``sweep.json`` holds it (unset fields left out)."""
        return self.model_dump(exclude_none=True)


class Fingerprint(BaseModel):
    """``sweep.json``: what the records of a run directory mean, and whose they are."""

    model_config = ConfigDict(frozen=True, extra="allow")

    kind: str | None = None
    """``sweep`` or ``bisection``: what the directory holds (null in older files)."""
    name: str | None = None
    """The sweep's name (null in older files)."""
    runner: str | None = None
    """The runner's identity (module source hash or ``runner_version``, plus the digest of its
    ``runner_files``)."""
    arms: JsonObjects = Field(default_factory=dict)
    """Each arm's canonical configuration (facets, ablations, restorations), by id."""
    scenarios: JsonObjects = Field(default_factory=dict)
    """Each scenario's inputs as JSON reads them back, by id (the reference is not part of it)."""
    runner_files: dict[str, str] | None = None
    """The SHA-256 prefix of each file ``runner_files`` covers, by path."""
    sequential: SequentialDesign | None = None
    """A sequential sweep's design; null for a fixed-sample sweep."""
    schema_version: int | None = None
    """Set when written by a run store."""
    runs_first_line_sha256: str | None = None
    """The digest of ``runs.jsonl``'s first line (a file copied in from elsewhere is refused)."""

    def as_data(self) -> dict[str, Any]:
        """The fingerprint as ``sweep.json`` holds it (unset fields left out; its arms and
        scenarios not copied).
        """
        found = {key: value for key, value in self if value is not None}
        if self.sequential is not None:
            found["sequential"] = self.sequential.as_data()
        return found


def owner_conflict(old: Fingerprint, new: Fingerprint) -> str | None:
    """A directory that holds another sweep, or a bisection when a sweep comes (or the reverse):
    its records must not be mixed in. None when the same (or an older directory without it).
    """
    before, after = (old.kind, old.name), (new.kind, new.name)
    if None in before or None in after or before == after:
        return None
    return (
        f"it holds the {before[0]} {before[1]!r}, not the {after[0]} {after[1]!r}; "
        "pass --out NEW_DIR (or --fresh to move it aside)"
    )


def leaf_changes(path: str, before: Any, after: Any) -> list[str]:
    """``path.to.leaf: old → new`` for each leaf that differs (lists compared whole)."""
    if isinstance(before, dict) and isinstance(after, dict):
        out: list[str] = []
        for key in sorted(set(before) | set(after), key=str):
            out += leaf_changes(f"{path}.{key}", before.get(key), after.get(key))
        return out
    if canonical_json(before) == canonical_json(after):
        return []
    return [f"{path}: {canonical_json(before)} → {canonical_json(after)}"]


def _runner_change(old: Fingerprint, new: Fingerprint) -> list[str]:
    """The runner's change: the data files that differ when only they changed, else the
    identities.
    """
    base = [str(x.runner or "").split("+files:")[0] for x in (old, new)]
    files = [x.runner_files or {} for x in (old, new)]
    if base[0] == base[1] and files[0] != files[1]:
        names = sorted(set(files[0]) | set(files[1]))
        return [
            f"runner_files[{name}]: "
            + ("added" if name not in files[0] else "removed" if name not in files[1] else "edited")
            + f" ({files[0].get(name, '-')} → {files[1].get(name, '-')})"
            for name in names
            if files[0].get(name) != files[1].get(name)
        ]
    return [f"runner: was {old.runner!r}, now {new.runner!r}"]


def differences(old: Fingerprint, new: Fingerprint) -> list[str]:
    """Changes that would make old runs mean something else (added arms/scenarios are fine),
    each as compact as ``arms[dense].facets.k: 2 → 3``.
    """
    found: list[str] = []
    if old.runner != new.runner:
        found += _runner_change(old, new)
    if old.sequential is not None and new.sequential is not None:
        before, after = old.sequential.as_data(), new.sequential.as_data()
        changed = [
            f"{k}: {before.get(k)!r} -> {after.get(k)!r}"
            for k in sorted(set(before) | set(after))
            if before.get(k) != after.get(k)
        ]
        if changed:
            found.append(
                "sequential design (its stopping decisions depend on it): " + ", ".join(changed)
            )
    for label, was, now in (
        ("arms", old.arms, new.arms),
        ("scenarios", old.scenarios, new.scenarios),
    ):
        for key in sorted(set(was) & set(now)):
            where = f"{label}[{key}]" + (".inputs" if label == "scenarios" else "")
            found += leaf_changes(where, was[key], now[key])
    return found


def merged(old: Fingerprint | None, new: Fingerprint) -> Fingerprint:
    """The union of two compatible fingerprints (removed arms stay protected), as a run store
    writes it: the owner the directory had first, the new runner, design and runner files.
    """
    if old is None:
        old = Fingerprint()
    return Fingerprint(
        kind=old.kind if old.kind is not None else new.kind,
        name=old.name if old.name is not None else new.name,
        runner=new.runner,
        arms={**old.arms, **new.arms},
        scenarios={**old.scenarios, **new.scenarios},
        sequential=new.sequential if new.sequential is not None else old.sequential,
        runner_files=new.runner_files or None,
        schema_version=FINGERPRINT_SCHEMA_VERSION,
    )
