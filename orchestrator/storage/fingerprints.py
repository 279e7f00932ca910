"""Fingerprints: what the records of a run directory mean, and whether a new plan changes it.

A fingerprint holds the runner's identity, each arm's canonical configuration and each
scenario's inputs. A resume may add arms and scenarios; it may not change any of those three for
an id that already has records (:func:`differences` lists each change).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from counterfact.probes.arms import ArmSpec
from counterfact.probes.scenarios import ScenarioSpec


def canonical_json(value: Any) -> str:
    """Key-sorted JSON, the form fingerprints compare."""
    return json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))


_JSON_SCALARS = (str, int, float, bool, type(None))


def _as_json(inputs: Any) -> Any:
    """``inputs`` as JSON reads it back: a flat mapping of text keys to JSON scalars is that
    already (the common case, without a round trip: 10^6 scenarios took 10 s), else the round
    trip through :func:`canonical_json`.
    """
    flat = all(
        type(k) is str and type(v) in _JSON_SCALARS and v == v  # NaN: JSON has none
        for k, v in inputs.items()
    )
    return dict(inputs) if flat else json.loads(canonical_json(dict(inputs)))


def fingerprint(
    runner_identity: str,
    arms: Sequence[ArmSpec],
    scenarios: Sequence[ScenarioSpec],
    design: dict[str, Any] | None = None,
    runner_files: Sequence[tuple[str, str]] = (),
) -> dict[str, Any]:
    """What the records of a run directory mean: runner, arms' configurations, scenarios' inputs,
    and for a sequential sweep its ``design`` (what its stopping decisions depend on, the cap
    excepted: raising ``max_samples`` on resume is how undecided arms continue).
    """
    found = {
        "runner": runner_identity,
        "arms": {a.id: json.loads(a.canonical()) for a in arms},
        "scenarios": {s.id: _as_json(s.inputs) for s in scenarios},
    }
    if runner_files:
        found["runner_files"] = dict(runner_files)
    return found | ({"sequential": design} if design is not None else {})


def owner_conflict(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """A directory that holds another sweep, or a bisection when a sweep comes (or the reverse):
    its records must not be mixed in. None when the same (or an older directory without it).
    """
    before = (old.get("kind"), old.get("name"))
    after = (new.get("kind"), new.get("name"))
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


def _runner_change(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The runner's change: the data files that differ when only they changed, else the
    identities.
    """
    base = [str(x.get("runner", "")).split("+files:")[0] for x in (old, new)]
    files = [x.get("runner_files") or {} for x in (old, new)]
    if base[0] == base[1] and files[0] != files[1]:
        names = sorted(set(files[0]) | set(files[1]))
        return [
            f"runner_files[{name}]: "
            + ("added" if name not in files[0] else "removed" if name not in files[1] else "edited")
            + f" ({files[0].get(name, '-')} → {files[1].get(name, '-')})"
            for name in names
            if files[0].get(name) != files[1].get(name)
        ]
    return [f"runner: was {old.get('runner')!r}, now {new.get('runner')!r}"]


def differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Changes that would make old runs mean something else (added arms/scenarios are fine),
    each as compact as ``arms[dense].facets.k: 2 → 3``.
    """
    found: list[str] = []
    if old.get("runner") != new.get("runner"):
        found += _runner_change(old, new)
    before, after = old.get("sequential"), new.get("sequential")
    if before is not None and after is not None and before != after:
        changed = [
            f"{k}: {before.get(k)!r} -> {after.get(k)!r}"
            for k in sorted(set(before) | set(after))
            if before.get(k) != after.get(k)
        ]
        found.append(
            "sequential design (its stopping decisions depend on it): " + ", ".join(changed)
        )
    for section, label in (("arms", "arms"), ("scenarios", "scenarios")):
        before, after = old.get(section, {}), new.get(section, {})
        for key in sorted(set(before) & set(after)):
            where = f"{label}[{key}]" + (".inputs" if section == "scenarios" else "")
            found += leaf_changes(where, before[key], after[key])
    return found


def merged(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The union of two compatible fingerprints (removed arms stay protected)."""
    design = new.get("sequential", old.get("sequential"))
    owner = {k: old.get(k, new.get(k)) for k in ("kind", "name") if k in old or k in new}
    return (
        owner
        | {
            "runner": new["runner"],
            "arms": {**old.get("arms", {}), **new["arms"]},
            "scenarios": {**old.get("scenarios", {}), **new["scenarios"]},
        }
        | ({"sequential": design} if design is not None else {})
        | ({"runner_files": new["runner_files"]} if new.get("runner_files") else {})
    )
