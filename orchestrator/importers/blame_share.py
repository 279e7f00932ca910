"""What the calls of one ``counterfact blame DIR`` share: one rate controller and one budget.

**One rate controller.** Every call's search runs on its own executor, but they all hold one
:class:`~counterfact.orchestrator.engine.pacing.throttle.Throttle`. In-process, each call takes its
part of the one limit (``limit // calls at once``, at least one, as a Ray worker takes its part
of a sweep's), and every call's refusals (HTTP 429) and served calls move that one limit. On Ray
(``--executor ray``, ``--address``) the calls' probes run on one set of worker actors under the
one throttle actor a sweep on Ray has
(:mod:`~counterfact.orchestrator.engine.executors.ray_shared`): every worker, on every node,
takes its part of the same limit whichever call's runs it holds. A rate-limited API is therefore
met by the command as a whole: it steps down together, not call by call. Its starting limit is
the per-call concurrency times the calls at once.

**One budget** (``--budget runs=N`` / ``usd=X``) over the whole command, counted per call: a call
starts only while

    spent + (calls in flight + 1) x (mean spend per finished call) <= limit

for each key (the first calls start on trust, as a sweep's first runs do); ``runs`` counts
model calls (the searches' runner calls), ``usd`` what they cost (``--price``). Spend read back
from an earlier run of the command counts too, so the budget is the directory's, as a sweep's
is: once reached, raise it and run the same command again to continue (the calls blamed are
read back, nothing is sent twice). A call already blamed (its ``blame.json`` written) is read
back whatever the budget.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from counterfact.exceptions import ConfigError
from counterfact.orchestrator.config.resolve import ResolvedBisect
from counterfact.orchestrator.engine.executors.base import Executor
from counterfact.orchestrator.engine.executors.local import LocalExecutor
from counterfact.orchestrator.engine.executors.options import ExecutorOptions
from counterfact.orchestrator.engine.executors.registry import make_executor
from counterfact.orchestrator.engine.pacing.throttle import Throttle
from counterfact.records.runs import RunRecord

if TYPE_CHECKING:
    from counterfact.orchestrator.engine.executors.ray_shared import PoolHub

BUDGET_KEYS = ("runs", "usd")


def parse_budget(items: tuple[str, ...]) -> dict[str, float]:
    """``--budget runs=800 --budget usd=2.5`` as limits.

    Raises:
        ConfigError: not ``KEY=NUMBER``, an unknown key, or a negative number.
    """
    limits: dict[str, float] = {}
    for item in items:
        key, eq, value = item.partition("=")
        try:
            number = float(value) if eq else math.nan
        except ValueError:
            number = math.nan
        if key not in BUDGET_KEYS or not number >= 0:
            msg = (
                f"--budget takes KEY=NUMBER with KEY one of {', '.join(BUDGET_KEYS)} and a "
                f"number of at least 0, e.g. --budget runs=800; got {item!r}"
            )
            raise ConfigError(msg, field="--budget")
        limits[key] = number
    return limits


@dataclass(frozen=True)
class CallSpend:
    """What one call's search spent (read back runs included: the directory's spend)."""

    runs: int
    usd: float

    @classmethod
    def of(cls, runs: tuple[RunRecord, ...]) -> CallSpend:
        """From the search's run records (taken from the run cache: nothing spent)."""
        spent = [r for r in runs if not r.from_cache]
        usd = sum((r.cost or {}).get("usd", 0.0) for r in spent)
        return cls(runs=sum(r.attempts for r in spent), usd=usd)


class Shared:
    """One rate controller and one budget for every call of a ``blame DIR`` (thread-safe)."""

    def __init__(self, calls_at_once: int, limits: Mapping[str, float] | None = None) -> None:
        self.calls_at_once = max(1, calls_at_once)
        self.limits = dict(limits or {})
        self.spent = dict.fromkeys(self.limits, 0.0)
        self.finished = 0
        self.in_flight = 0
        self.exhausted: list[str] = []
        """Keys whose limit stopped calls from starting."""
        self.throttle: Throttle | None = None
        self.hub: PoolHub | None = None
        """On Ray: the worker actors and the throttle actor every call's probes share."""
        self._lock = threading.Lock()
        self._slot = 0

    def executor(self, plan: ResolvedBisect) -> Executor:
        """The executor one call's search runs on: in-process, its part of the one limit; on
        Ray (after :meth:`start_ray`), the hub's actors under the one throttle actor.
        """
        if self.hub is not None:
            return self.hub.executor()
        built = make_executor("local", plan.sweep.executor_options)
        if not isinstance(built, LocalExecutor):  # pragma: no cover - "local" is in-process
            return built
        per_call = built.pool.overlapping(plan.sweep.runner, 1) or 1
        with self._lock:
            if self.throttle is None:
                self.throttle = Throttle(per_call * self.calls_at_once, built.pool.per_minute)
            built.throttle = self.throttle
            built.share = (self._slot % self.calls_at_once, self.calls_at_once)
            self._slot += 1
        return built

    def start_ray(self, plan: ResolvedBisect) -> None:
        """Run every call's probes on Ray from now on: start or join it once (here, in the main
        thread), with ``plan``'s ``executor:`` section; the actors start with the first probe.
        """
        from counterfact.orchestrator.engine.executors.ray_shared import PoolHub

        options: ExecutorOptions = plan.sweep.executor_options
        per_call = options.pool.overlapping(plan.sweep.runner, 1) or 1
        self.hub = PoolHub(options, per_call * self.calls_at_once)
        self.hub.start()

    def close(self) -> None:
        """End the Ray actors (and the Ray instance, when started here)."""
        if self.hub is not None:
            self.hub.close()
            self.hub = None

    def may_start(self) -> bool:
        """Reserve a place for one more call, if the budget leaves room for it."""
        with self._lock:
            if self.exhausted:
                return False
            full = sorted(k for k in self.limits if not self._room(k))
            if full:
                self.exhausted = full
                return False
            self.in_flight += 1
            return True

    def _room(self, key: str) -> bool:
        mean = self.spent[key] / self.finished if self.finished else None
        if mean is None or mean <= 0:
            return self.spent[key] <= self.limits[key]
        return self.spent[key] + (self.in_flight + 1) * mean <= self.limits[key] + 1e-9

    def done(self, spend: CallSpend | None, reserved: bool) -> None:
        """A call ended (``spend`` None: it could not be blamed and spent nothing known)."""
        with self._lock:
            if reserved:
                self.in_flight = max(0, self.in_flight - 1)
            if spend is None:
                return
            self.finished += 1
            for key in self.limits:
                self.spent[key] += spend.runs if key == "runs" else spend.usd

    def summary(self) -> str:
        """The budget's keys as ``runs 812 of 800``."""
        return ", ".join(f"{k} {self.spent[k]:g} of {self.limits[k]:g}" for k in self.limits)
