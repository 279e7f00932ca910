"""What a sweep spent: every recorded run's costs summed per arm and overall (resumed and
cached runs included: they are the directory's spend), for the console and ``summary.json``.
"""

from __future__ import annotations

from collections import defaultdict

from counterfact.records.execution import SpendRecord
from counterfact.records.runs import RunRecord


class SpendTally:
    """Sums each run's ``cost`` by arm; told about every record the sweep holds."""

    def __init__(self, arms: tuple[str, ...] = ()) -> None:
        self._order = {arm: i for i, arm in enumerate(arms)}
        """The sweep's arm order: ``by_arm`` follows it, whatever order runs finished in."""
        self._by_arm: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self._runs = 0
        self._refused = 0
        self._judge: dict[str, float] = defaultdict(float)
        """What model judges cost (``calls``, ``tokens``, ``usd``): apart from the runs'."""
        self._judge_by_arm: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        """The same per arm whose output asked for the call."""

    def observe(self, record: RunRecord) -> None:
        """Add one run's reported costs (never an entry its record refused)."""
        self._refused += record.cost_refused is not None
        if not record.cost:
            return
        self._runs += 1
        mine = self._by_arm[record.arm]
        for key, value in record.cost.items():
            mine[key] += value

    def charge_judge(self, cost: dict[str, float], arm: str | None = None) -> None:
        """Add one judge call's cost (a recorded one read back on resume included), and to
        ``arm``'s when it is known.
        """
        for key, value in cost.items():
            self._judge[key] += value
            if arm is not None:
                self._judge_by_arm[arm][key] += value

    def totals(self) -> dict[str, float]:
        """Cost so far per key over every arm; safe to call from another thread while records
        arrive (``live.json``): each dictionary is copied whole first, which CPython does without
        giving up the interpreter lock.
        """
        total: dict[str, float] = defaultdict(float)
        for costs in list(self._by_arm.values()):
            for key, value in dict(costs).items():
                total[key] += value
        return dict(total)

    def record(self) -> SpendRecord:
        """The totals, rounded to 1e-6."""
        last = len(self._order)
        arms = sorted(self._by_arm, key=lambda a: (self._order.get(a, last), a))
        by_arm = {
            arm: {k: round(v, 6) for k, v in sorted(self._by_arm[arm].items())} for arm in arms
        }
        total: dict[str, float] = defaultdict(float)
        for costs in by_arm.values():
            for key, value in costs.items():
                total[key] += value
        judge_by_arm = {
            arm: {k: round(v, 6) for k, v in sorted(self._judge_by_arm[arm].items())}
            for arm in sorted(self._judge_by_arm, key=lambda a: (self._order.get(a, last), a))
        }
        return SpendRecord(
            total={k: round(v, 6) for k, v in sorted(total.items())},
            by_arm=by_arm,
            runs_with_cost=self._runs,
            runs_cost_refused=self._refused,
            judge={k: round(v, 6) for k, v in sorted(self._judge.items())} or None,
            judge_by_arm=judge_by_arm or None,
        )
