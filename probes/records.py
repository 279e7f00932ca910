"""Moved to :mod:`counterfact.records.runs`; importing a name from here warns, and this
path goes in counterfact 0.2.0 (:data:`counterfact.deprecation.REMOVED_IN`).
"""

from counterfact.deprecation import relocated

__getattr__ = relocated(
    __name__,
    dict.fromkeys(("RUN_SCHEMA_VERSION", "RunError", "RunRecord"), "counterfact.records.runs"),
)
