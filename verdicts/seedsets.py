"""Moved to :mod:`counterfact.records.seedsets` (records are read without numpy); kept so old
imports work for a release.
"""

from counterfact.records.seedsets import SEED_LIST_MAX, pack, unpack

__all__ = ["SEED_LIST_MAX", "pack", "unpack"]
