"""Arm declarations: facets as leaves, canonical configurations, and the refusals of rule 8.

Facets may be written nested (``retrieval: {kind: rerank}``) or with dotted keys
(``retrieval.kind: rerank``); both mean the same leaf. Internally an arm keeps its facets as a
flat mapping of dotted path -> leaf value; the runner sees them nested again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from counterfact.exceptions import ConfigError, RefusalError
from counterfact.probes.ids import check_ids
from counterfact.probes.runner import ArmView
from counterfact.records.vocabulary import InterventionKind


def flatten_facets(facets: Mapping[str, Any], *, field: str = "facets") -> dict[str, Any]:
    """Flatten nested and dotted facet keys into ``{dotted.path: leaf}``.

    Raises:
        ConfigError: a key is blank, or one leaf is given twice / both as a leaf and a prefix.
    """
    flat: dict[str, Any] = {}

    def walk(node: Mapping[str, Any], prefix: tuple[str, ...]) -> None:
        for raw_key, value in node.items():
            key = str(raw_key)
            parts = tuple(key.split("."))
            if any(not p.strip() for p in parts):
                msg = f"facet key {key!r} has an empty segment; write keys like 'retrieval.kind'"
                raise ConfigError(msg, field=field)
            path = prefix + parts
            if isinstance(value, Mapping):
                walk(value, path)  # an empty mapping holds no leaf: it declares nothing
                continue
            dotted = ".".join(path)
            if dotted in flat:
                msg = f"facet {dotted!r} is declared twice (nested and dotted); keep one"
                raise ConfigError(msg, field=field)
            flat[dotted] = value

    walk(facets, ())
    _refuse_leaf_prefix_clash(flat, field)
    return flat


def _refuse_leaf_prefix_clash(flat: Mapping[str, Any], field: str) -> None:
    keys = set(flat)
    for key in keys:
        parts = key.split(".")
        for i in range(1, len(parts)):
            prefix = ".".join(parts[:i])
            if prefix in keys:
                msg = (
                    f"facet {prefix!r} is both a value and the parent of {key!r}; "
                    "a facet is either a leaf or a mapping"
                )
                raise ConfigError(msg, field=field)


def nest_facets(flat: Mapping[str, Any]) -> dict[str, Any]:
    """Expand ``{dotted.path: leaf}`` back into a nested mapping."""
    nested: dict[str, Any] = {}
    for dotted, value in flat.items():
        node = nested
        *parents, leaf = dotted.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return nested


@dataclass(frozen=True)
class ArmSpec:
    """One declared arm, validated and normalised."""

    id: str
    facets: Mapping[str, Any]
    """Flat mapping of dotted facet path -> declared leaf value."""
    ablations: tuple[str, ...] = ()
    restorations: tuple[str, ...] = ()
    placebo: bool = False
    """An A/A rerun of the baseline's configuration under its own id (rule 17)."""
    seed_offset: int = 0
    """``placebo: fresh``: the runner sees seed index + this (a range no other arm uses)."""

    @property
    def placebo_kind(self) -> Literal["same-seeds", "fresh-seeds"] | None:
        """``same-seeds`` (``placebo: true``, a determinism check), ``fresh-seeds``
        (``placebo: fresh``, a false-alarm check); None for an arm that is not a placebo.
        """
        if not self.placebo:
            return None
        return "fresh-seeds" if self.seed_offset else "same-seeds"

    @property
    def declares_nothing(self) -> bool:
        """True when the arm declares no facet leaf, ablation or restoration (``{memory: {}}``
        holds no leaf: it declares nothing).
        """
        leaves = [v for v in self.facets.values() if not (isinstance(v, Mapping) and not v)]
        return not (leaves or self.ablations or self.restorations)

    def canonical(self) -> str:
        """The arm's configuration as a canonical string: the order of facet keys and of the
        ablation / restoration lists is ignored; a facet value that is a list keeps its order.
        """
        facets = {k: _canonical_value(v) for k, v in sorted(self.facets.items())}
        payload: dict[str, Any] = {
            "facets": facets,
            "ablations": sorted(set(self.ablations)),
            "restorations": sorted(set(self.restorations)),
        }
        if self.placebo:  # its own configuration: never the baseline's cached runs, nor a twin
            payload["placebo"] = self.id
        if self.seed_offset:
            payload["seed_offset"] = self.seed_offset
        return json.dumps(payload, sort_keys=True, default=str)

    def view(self) -> ArmView:
        """The arm as the runner sees it."""
        return ArmView(
            id=self.id,
            facets=nest_facets(self.facets),
            ablations=self.ablations,
            restorations=self.restorations,
            seed_offset=self.seed_offset,
        )


def _canonical_value(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _canonical_value(v) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple):  # an ordered value: [a, b] is not [b, a] (rule 8)
        return [_canonical_value(v) for v in value]
    return value


def facets_diff(base: ArmSpec, arm: ArmSpec) -> dict[str, list[Any]]:
    """``{dotted.path: [baseline value, arm value]}`` for every facet leaf that differs (null
    where one side does not declare it), sorted by path.
    """
    paths = sorted(set(base.facets) | set(arm.facets))
    return {
        p: [base.facets.get(p), arm.facets.get(p)]
        for p in paths
        if _canonical_value(base.facets.get(p)) != _canonical_value(arm.facets.get(p))
    }


def check_baseline(arms: Sequence[ArmSpec], baseline: str) -> ArmSpec:
    """The baseline's spec.

    Raises:
        RefusalError: ``baseline`` is not an arm id (the message lists the known ones).
    """
    found = next((a for a in arms if a.id == baseline), None)
    if found is None:
        known = ", ".join(a.id for a in arms)
        msg = f"baseline {baseline!r} is not an arm id; known arms: {known}"
        raise RefusalError(msg, field="baseline")
    return found


def check_not_ablated(ids: Sequence[str], base: ArmSpec, fields: Sequence[str]) -> None:
    """Refuse ablation ids the baseline already ablates (ablating them again changes nothing).

    Raises:
        RefusalError: the first such id, by its field.
    """
    check_ids(ids, fields, "ablation id")
    for item, where in zip(ids, fields, strict=True):
        if item in base.ablations:
            msg = f"{item!r} is already ablated by the baseline {base.id!r}; remove it here"
            raise RefusalError(msg, field=where)


def check_arms(arms: Sequence[ArmSpec], baseline: str, fields: Sequence[str] | None = None) -> None:
    """Apply the declaration refusals of rule 8.

    ``fields`` names where each arm came from (``arms[2]``, ``ablate_each[0]``); default
    ``arms[i]``.

    Raises:
        RefusalError: fewer than two arms, a blank or duplicate id, an unknown baseline, a
            challenger that declares nothing, or two arms with the same canonical configuration.
    """
    where = list(fields) if fields is not None else [f"arms[{i}]" for i in range(len(arms))]
    if len(arms) < 2:
        msg = (
            f"a sweep needs at least two arms (a baseline and a challenger), got {len(arms)}; "
            "add an arm that declares facets, ablations or restorations"
        )
        raise RefusalError(msg, field="arms")
    check_ids([a.id for a in arms], [f"{w}.id" for w in where], "arm id")
    check_baseline(arms, baseline)
    seen_configs: dict[str, int] = {}
    for i, arm in enumerate(arms):
        if arm.id != baseline and arm.declares_nothing and not arm.placebo:
            msg = (
                f"challenger arm {arm.id!r} declares nothing, so it is the baseline again; "
                "give it facets, ablations or restorations"
            )
            raise RefusalError(msg, field=where[i])
        key = arm.canonical()
        if key in seen_configs:
            j = seen_configs[key]
            msg = (
                f"arm {arm.id!r} has the same configuration as {where[j]} ({arms[j].id!r}); "
                "facet order and list order do not make a new arm — change or remove one"
            )
            raise RefusalError(msg, field=where[i])
        seen_configs[key] = i


@dataclass(frozen=True)
class Intervention:
    """What an arm changes relative to the baseline, and how a claim names it (rule 9)."""

    kind: InterventionKind
    """``substitution`` when facets differ from the baseline's; otherwise ``ablation``,
    ``restoration`` or ``mixed`` (both) by the ids the arm adds to the baseline's."""
    phrase: str
    """``switching to arm 'x'``, ``removing 'tool:search'``, ``restoring 'fact:7'`` ..."""
    removed: tuple[str, ...] = ()
    restored: tuple[str, ...] = ()


def _ids(ids: Sequence[str]) -> str:
    quoted = [f"'{i}'" for i in ids]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def intervention(arm: ArmSpec, baseline: ArmSpec) -> Intervention:
    """Classify ``arm`` against ``baseline``."""
    if arm.id == baseline.id:
        return Intervention("baseline", f"the baseline '{arm.id}'")
    if arm.placebo and arm.seed_offset:
        return Intervention(
            "placebo",
            f"rerunning the baseline's configuration as '{arm.id}' on fresh seeds (the runner "
            f"got seed + {arm.seed_offset:,})",
        )
    if arm.placebo:
        return Intervention(
            "placebo",
            f"rerunning the baseline's configuration as '{arm.id}' on the baseline's own seeds "
            "(a determinism check)",
        )
    removed = tuple(i for i in arm.ablations if i not in set(baseline.ablations))
    restored = tuple(i for i in arm.restorations if i not in set(baseline.restorations))
    same_facets = dict(arm.facets) == dict(baseline.facets)
    dropped = set(baseline.ablations) - set(arm.ablations) or set(baseline.restorations) - set(
        arm.restorations
    )
    if not same_facets or dropped or not (removed or restored):
        return Intervention("substitution", f"switching to arm '{arm.id}'", removed, restored)
    parts = []
    if removed:
        parts.append(f"removing {_ids(removed)}")
    if restored:
        parts.append(f"restoring {_ids(restored)}")
    kind: InterventionKind = (
        "mixed" if removed and restored else "ablation" if removed else "restoration"
    )
    return Intervention(kind, " and ".join(parts), removed, restored)
