"""Moved to :mod:`counterfact.records.seedsets`; importing a name from here warns, and this
path goes in counterfact 0.2.0 (:data:`counterfact.deprecation.REMOVED_IN`).
"""

from counterfact.deprecation import relocated

__getattr__ = relocated(
    __name__, dict.fromkeys(("SEED_LIST_MAX", "pack", "unpack"), "counterfact.records.seedsets")
)
