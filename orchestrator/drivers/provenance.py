"""Provenance: the version, the clock, what a run directory means, and the fields every record
kind (``summary.json``, ``bisect.json``) carries about where it came from — built once here.

Kept light (no Ray, no scipy): ``counterfact --version`` imports it.
"""

from __future__ import annotations

import platform
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from counterfact.orchestrator.config.resolve import ResolvedSweep
    from counterfact.orchestrator.storage.cache import RunCache
    from counterfact.probes.arms import ArmSpec
    from counterfact.records.fingerprint import Fingerprint
    from counterfact.records.summary import Provenance


def package_version() -> str:
    """Counterfact's installed version, or ``0+unknown`` when running from an uninstalled tree."""
    try:
        return version("counterfact")
    except PackageNotFoundError:
        return "0+unknown"


def fingerprint_of(sweep: ResolvedSweep, arms: Sequence[ArmSpec] | None = None) -> Fingerprint:
    """What a run directory of this sweep means (``arms`` default: every arm of the sweep, and
    the directory holds a sweep; given ``arms``, a bisection).
    """
    from counterfact.orchestrator.storage.fingerprints import fingerprint

    chosen = list(arms) if arms is not None else list(sweep.arms)
    kind = "sweep" if arms is None else "bisection"
    return fingerprint(
        sweep.runner_identity,
        chosen,
        sweep.scenarios,
        sweep.design,
        sweep.runner_files,
        kind=kind,
        name=sweep.name,
    )


def open_cache(sweep: ResolvedSweep, cache_dir: Path | None) -> RunCache | None:
    """The run cache ``cache_dir`` names, else the config's ``cache_dir``; None: no cache."""
    from counterfact.orchestrator.storage.cache import RunCache

    folder = cache_dir or sweep.cache_dir
    return RunCache(folder, sweep.runner_identity) if folder is not None else None


def _installed(distribution: str) -> str | None:
    """A distribution's version without importing it (None when it is not installed)."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def provenance(sweep: ResolvedSweep, started: str) -> Provenance:
    """What every record kind carries about where it came from."""
    from counterfact.orchestrator.engine.calling.worker import now_iso  # light at import: --version
    from counterfact.records.summary import Provenance

    return Provenance(
        name=sweep.name,
        config=sweep.resolved_config(),
        config_source=str(sweep.source) if sweep.source else None,
        overrides=list(sweep.overrides),
        counterfact_version=package_version(),
        python_version=platform.python_version(),
        ray_version=_installed("ray"),
        started_at=started,
        finished_at=now_iso(),
    )
