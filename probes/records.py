"""Moved to :mod:`counterfact.records.runs` (the record contract's own floor); kept so old imports
work for a release.
"""

from counterfact.records.runs import RUN_SCHEMA_VERSION, RunError, RunRecord

__all__ = ["RUN_SCHEMA_VERSION", "RunError", "RunRecord"]
