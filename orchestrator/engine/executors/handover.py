"""What one Ray task carries each way: its runs, compactly, and its records, as their lines.

To the worker, a :class:`Shipment`: each distinct scenario and arm of the batch once, and the runs
as ``(scenario, arm, seed)`` index triples. A list of :class:`RunContext` made Ray pickle every
context on its own (cloudpickle's per-object hook on each dataclass), which cost the driver more
than running an instant runner; index triples are plain tuples of ints, which Ray packs natively.

Back, the task returns its records as the ``runs.jsonl`` lines they are stored as, in one
``bytes`` (:func:`encode`; each line made by
:func:`~counterfact.orchestrator.storage.writable.record_line` on the worker, so the escaping of
unwritable text happens where the record is made). Ray moves bytes without pickling; the driver
parses each line once for its tallies (:func:`decode`, through the fast
:func:`~counterfact.records.runlines.parse_run`) and writes the lines as they came, in one
write and one flush per batch (:meth:`.RunStore.append_batch`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from counterfact.orchestrator.engine.calling.worker import RetryPolicy, execute_run
from counterfact.orchestrator.engine.loading.loader import RunnerRef, resolve_runner
from counterfact.orchestrator.storage.writable import record_line
from counterfact.probes.runner import ArmView, RunContext, ScenarioView
from counterfact.records.runlines import parse_run
from counterfact.records.runs import RunRecord


@dataclass(frozen=True)
class Shipment:
    """A batch of runs: the views they share, once, and each run as indices into them."""

    scenarios: tuple[ScenarioView, ...]
    arms: tuple[ArmView, ...]
    runs: tuple[tuple[int, int, int], ...]
    """``(scenario index, arm index, seed)`` per run, in the batch's order."""

    def __len__(self) -> int:
        return len(self.runs)

    def contexts(self) -> list[RunContext]:
        """The batch's run contexts, in order."""
        scenarios, arms = self.scenarios, self.arms
        return [RunContext(scenarios[s], arms[a], seed) for s, a, seed in self.runs]


View = TypeVar("View", ScenarioView, ArmView)


class _Views(Generic[View]):
    """Distinct views in first-seen order: the same object, or an equal one with the same id."""

    def __init__(self) -> None:
        self.views: list[View] = []
        self._by_id: dict[str, int] = {}

    def index(self, view: View) -> int:
        found = self._by_id.get(view.id)
        if found is not None and (self.views[found] is view or self.views[found] == view):
            return found
        self._by_id[view.id] = len(self.views)
        self.views.append(view)
        return len(self.views) - 1


def ship(contexts: Sequence[RunContext]) -> Shipment:
    """The batch ``contexts`` as a :class:`Shipment` (order kept)."""
    scenarios: _Views[ScenarioView] = _Views()
    arms: _Views[ArmView] = _Views()
    runs = tuple((scenarios.index(c.scenario), arms.index(c.arm), c.seed) for c in contexts)
    return Shipment(tuple(scenarios.views), tuple(arms.views), runs)


def encode(records: Sequence[RunRecord]) -> bytes:
    """Records as their ``runs.jsonl`` lines, each ending in a newline, UTF-8."""
    return "".join(record_line(r)[1] + "\n" for r in records).encode("utf-8")


@dataclass(frozen=True)
class Decoded:
    """A task's records and, beside each, the line it is stored as."""

    records: list[RunRecord]
    lines: list[str]


def decode(blob: bytes) -> Decoded:
    """The records of :func:`encode`'s ``blob`` (each line parsed and validated once)."""
    lines = blob.decode("utf-8").split("\n")
    lines.pop()  # the empty piece after the last newline
    return Decoded([parse_run(line) for line in lines], lines)


def run_shipment(
    runner: RunnerRef, shipment: Shipment, policy: RetryPolicy, node: str | None
) -> bytes:
    """Run a shipment in order in this worker process; its records as :func:`encode` lines."""
    fn = resolve_runner(runner)
    return encode([execute_run(fn, ctx, policy, node, worker=True) for ctx in shipment.contexts()])
