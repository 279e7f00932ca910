"""Noticing early that a runner cannot work, so a sweep does not spend its whole plan on it.

Two signs, both before any run of the sweep has succeeded (runs read back on a resume or taken
from the cache count: one success anywhere disarms the watch):

- the runner's return value broke the contract (``RunnerReturnError``) on the baseline's runs
  and on :data:`CONTRACT_RUNS` runs in all: the configuration as it stands cannot give a result;
- the first run of every (scenario, arm) failed, all with the same exception and message: a
  broken import, a missing key, a service that is down — not something an arm causes. (One
  broken scenario does not stop the others: every scenario must have failed alike.)
"""

from __future__ import annotations

from collections.abc import Iterable

from counterfact.records.runs import RunRecord

CONTRACT_RUNS = 3
"""Runs with a refused return value (the baseline's among them) after which scheduling stops."""


def all_failed_message(count: int, first: str | None) -> str:
    """The one line for a sweep or bisection whose every run failed."""
    return f"every one of the {count} runs failed (first: {first})"


class FailureWatch:
    """Sees records in arrival order; :meth:`see` returns why to stop, once."""

    def __init__(self, scenarios: Iterable[str], arms: Iterable[str], baseline: str) -> None:
        arm_ids = list(arms)
        self.expected = frozenset((s, a) for s in scenarios for a in arm_ids)
        self.baseline = baseline
        self.runs = 0
        self.succeeded = False
        """Set by the run source when any record (new, read back or cached) succeeded."""
        self._contract = 0
        self._baseline_contract = 0
        self._first: dict[tuple[str, str], tuple[str, str]] = {}
        self.first_error: str | None = None
        """The first failure's ``Type: message`` (for messages when every run failed)."""

    def see(self, record: RunRecord) -> str | None:
        """Why scheduling should stop after ``record``, or None."""
        self.runs += 1
        if record.error is None:
            self.succeeded = True
            return None
        error = (record.error.type, record.error.message)
        if self.first_error is None:
            self.first_error = f"{error[0]}: {error[1]}"[:300]
        if self.succeeded:
            return None
        if error[0] == "RunnerReturnError":
            self._contract += 1
            self._baseline_contract += record.arm == self.baseline
        if self._baseline_contract and self._contract >= CONTRACT_RUNS:
            return (
                f"the runner's return value broke the contract on {self._contract} runs, the "
                f"baseline's among them ({self.first_error})"
            )
        self._first.setdefault((record.scenario, record.arm), error)
        seen = set(self._first)
        if len(self.expected) > 1 and self.expected <= seen and len(set(self._first.values())) == 1:
            return (
                f"the first run of every arm on every scenario ({len(self.expected)}) failed "
                f"with the same error ({self.first_error})"
            )
        return None
