"""Did the arm take effect? The run manifests against the arm's declared facets (rule 6).

Only declared facets are compared, as dotted paths into each manifest. A path the manifest does
not hold is a mismatch with no observed value, never a wildcard. Where a path reaches a list (of
mappings), the declared leaves under that prefix hold iff one element satisfies all of them;
otherwise the prefix gets one mismatch carrying the observed list (an empty list, or elements
that are not mappings, satisfy nothing). Every run that reported a manifest must agree;
mismatches are de-duplicated by (facet, observed). Runs that reported no manifest are not
witnesses either way; ``checked`` is false when no run reported one or the arm declares no
facets.

Two ways a check fails, told apart: a manifest *contradicts* a facet (it reports another value:
the arm did not take effect), or it does not *report* it (the key is absent: whether the arm
took effect cannot be checked). Both withhold the verdict, with different words and fixes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from counterfact.probes.ablation import covers

_ABSENT: Any = object()


@dataclass(frozen=True)
class Mismatch:
    """One declared facet the manifest contradicted."""

    facet: str
    """Dotted path of the declared facet (or of the list prefix whose elements all failed)."""
    declared: Any
    """The declared value (for a list prefix: the declared leaves under it, as a flat mapping)."""
    observed: Any = _ABSENT
    """What the manifest holds there; absent when the manifest does not name it."""

    @property
    def observed_present(self) -> bool:
        """False when the manifest did not report this facet at all."""
        return self.observed is not _ABSENT


@dataclass(frozen=True)
class Application:
    """The manifest check of one arm over its runs."""

    checked: bool
    applied: bool | None
    """None when not checked: absence of evidence is not a verdict either way."""
    manifests_seen: int
    mismatches: tuple[Mismatch, ...]
    mismatches_omitted: int = 0
    """Further distinct mismatches, counted but not kept (a manifest value that differs per run
    would otherwise grow the record with every seed)."""
    manifests_mismatched: int = 0
    """Runs whose manifest showed at least one mismatch."""
    manifests_contradicted: int = 0
    """Runs whose manifest reported a declared facet with another value (the rest of the
    mismatched ones only left declared facets out)."""

    @property
    def unreported(self) -> bool:
        """Checked and failed only because manifests left declared facets out: none reported
        another value, so whether the arm took effect is unknown rather than refuted.
        """
        if self.applied is not False or self.manifests_contradicted:
            return False
        return not any(m.observed_present for m in self.mismatches)

    @property
    def unreported_facets(self) -> tuple[Mismatch, ...]:
        """The first mismatch of each declared facet a manifest did not report, lowest seed
        first.
        """
        first: dict[str, Mismatch] = {}
        for m in self.mismatches:
            if not m.observed_present:
                first.setdefault(m.facet, m)
        return tuple(first.values())


def _same(declared: Any, observed: Any) -> bool:
    if isinstance(declared, bool) or isinstance(observed, bool):
        return isinstance(declared, bool) and isinstance(observed, bool) and declared == observed
    return bool(declared == observed)


def _is_list(value: Any) -> bool:
    return isinstance(value, list | tuple)


def _check(
    leaves: Mapping[tuple[str, ...], Any], node: Any, prefix: tuple[str, ...]
) -> list[Mismatch]:
    groups: dict[str, dict[tuple[str, ...], Any]] = {}
    for path, value in leaves.items():
        groups.setdefault(path[0], {})[path[1:]] = value
    found: list[Mismatch] = []
    for key, sub in groups.items():
        here = (*prefix, key)
        if not isinstance(node, Mapping) or key not in node:
            found.extend(Mismatch(".".join(here + rest), v) for rest, v in sub.items())
            continue
        child = node[key]
        deeper = {rest: v for rest, v in sub.items() if rest}
        if () in sub and not _same(sub[()], child):
            found.append(Mismatch(".".join(here), sub[()], child))
        if not deeper:
            continue
        if _is_list(child):
            # Elements that are not mappings (and an empty list) satisfy nothing.
            if not any(isinstance(e, Mapping) and not _check(deeper, e, ()) for e in child):
                declared = {".".join(rest): v for rest, v in deeper.items()}
                found.append(Mismatch(".".join(here), declared, child))
        else:
            found.extend(_check(deeper, child, here))
    return found


def check_manifest(declared: Mapping[str, Any], manifest: Mapping[str, Any]) -> list[Mismatch]:
    """Mismatches of one manifest against flat declared facets ``{dotted.path: value}``."""
    leaves = {tuple(path.split(".")): value for path, value in declared.items()}
    return _check(leaves, manifest, ())


def _key(m: Mismatch) -> tuple[str, str]:
    observed = json.dumps(m.observed, sort_keys=True, default=str) if m.observed_present else ""
    return (m.facet, ("=" + observed) if m.observed_present else "absent")


MAX_MISMATCHES = 50
"""Distinct mismatches kept per arm (the rest are counted), so records stay small."""


class ManifestLog:
    """The manifest check of one arm, fed one run at a time (rule 6).

    Mismatches are de-duplicated by (facet, observed); each keeps the lowest seed that showed it,
    so the result does not depend on the order runs arrive in. At most :data:`MAX_MISMATCHES`
    distinct ones are kept; further ones are counted.
    """

    def __init__(self, declared: Mapping[str, Any], removed: Sequence[str] = ()) -> None:
        self.declared = declared
        self.removed = tuple(removed)
        """The arm's ablations: a manifest that lists the ``parts`` it sent (the chat runner's)
        must list none of them, nor any part inside one (``m1`` covers ``m1.p0``)."""
        self.parts_seen = 0
        self.seen = 0
        self.omitted = 0
        self.mismatched = 0
        """Manifests (runs) with at least one mismatch."""
        self.contradicted = 0
        """Manifests (runs) that reported a declared facet with another value."""
        self._found: dict[tuple[str, str], tuple[int, Mismatch]] = {}

    def add(self, seed: int, manifest: Mapping[str, Any] | None) -> list[Mismatch]:
        """Check one successful run's manifest (None: the run reported none); return its
        mismatches.
        """
        if manifest is None:
            return []
        self.seen += 1
        found = check_manifest(self.declared, manifest) if self.declared else []
        found += self._parts(manifest)
        if not found:
            return []
        self.mismatched += bool(found)
        self.contradicted += any(m.observed_present for m in found)
        for mismatch in found:
            key = _key(mismatch)
            known = self._found.get(key)
            if known is not None:
                if seed < known[0]:
                    self._found[key] = (seed, mismatch)
            elif len(self._found) < MAX_MISMATCHES:
                self._found[key] = (seed, mismatch)
            else:
                self.omitted += 1
        return found

    def _parts(self, manifest: Mapping[str, Any]) -> list[Mismatch]:
        """A removed part the manifest says was sent (checked when it lists ``parts``)."""
        parts = manifest.get("parts")
        if not self.removed or not isinstance(parts, list):
            return []
        self.parts_seen += 1
        sent = [p for p in parts if any(covers(r, str(p)) for r in self.removed)]
        return [Mismatch("parts", {"without": list(self.removed)}, sent)] if sent else []

    def application(self) -> Application:
        """The result: unchecked when nothing was declared (no facet, no removed part a
        manifest lists) or no run reported a manifest.
        """
        if not (self.declared or self.parts_seen) or not self.seen:
            return Application(False, None, self.seen, ())
        ordered = sorted(self._found.items(), key=lambda kv: (kv[1][0], kv[0]))
        mismatches = tuple(m for _, (_, m) in ordered)
        return Application(
            True,
            not mismatches,
            self.seen,
            mismatches,
            self.omitted,
            self.mismatched,
            self.contradicted,
        )


def check_application(
    declared: Mapping[str, Any], manifests: Sequence[Mapping[str, Any] | None]
) -> Application:
    """Check every reported manifest of one arm (in seed order) against its declared facets."""
    log = ManifestLog(declared)
    for seed, manifest in enumerate(manifests):
        log.add(seed, manifest)
    return log.application()
