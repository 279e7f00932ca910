"""The installed package's version."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def package_version() -> str:
    """counterfact's installed version, or ``0+unknown`` when running from an uninstalled tree."""
    try:
        return version("counterfact")
    except PackageNotFoundError:
        return "0+unknown"
