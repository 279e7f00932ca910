"""Noticing early that a runner cannot work, so a sweep does not spend its whole plan on it.

Two signs, both before any run has succeeded:

- the runner's return value broke the contract (``RunnerReturnError``) on :data:`CONTRACT_RUNS`
  runs: every run will, since the runner's code is the same;
- the first run of every arm failed, and all of them with the same exception and message: a
  broken import, a missing key, a service that is down — not something an arm causes.

One successful run disarms the watch: from then on failures are evidence about arms.
"""

from __future__ import annotations

from collections.abc import Iterable

from counterfact.probes.records import RunRecord

CONTRACT_RUNS = 3
"""Runs with a refused return value, and no success, after which scheduling stops."""


class FailureWatch:
    """Sees records in arrival order; :meth:`see` returns why to stop, once."""

    def __init__(self, arms: Iterable[str]) -> None:
        self.arms = frozenset(arms)
        self.runs = 0
        self._succeeded = False
        self._contract = 0
        self._first: dict[str, tuple[str, str]] = {}
        self.first_error: str | None = None
        """The first failure's ``Type: message`` (for messages when every run failed)."""

    def see(self, record: RunRecord) -> str | None:
        """Why scheduling should stop after ``record``, or None."""
        self.runs += 1
        if record.error is None:
            self._succeeded = True
            return None
        error = (record.error.type, record.error.message)
        if self.first_error is None:
            self.first_error = f"{error[0]}: {error[1]}"[:300]
        if self._succeeded:
            return None
        self._contract += error[0] == "RunnerReturnError"
        if self._contract >= CONTRACT_RUNS:
            return (
                f"the runner's return value broke the contract on the first {self._contract} "
                f"runs ({self.first_error})"
            )
        self._first.setdefault(record.arm, error)
        same = len(set(self._first.values())) == 1
        if len(self.arms) > 1 and same and self.arms <= set(self._first):
            return (
                f"the first run of every arm ({len(self.arms)}) failed with the same error "
                f"({self.first_error})"
            )
        return None
