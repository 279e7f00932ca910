"""The executor interface: contexts in, run records out as they finish."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import ClassVar

from counterfact.orchestrator.imports import RunnerRef
from counterfact.probes.records import RunRecord
from counterfact.probes.runner import RunContext


class Executor(ABC):
    """Runs a plan. One method: ``run`` yields each run's record as soon as it is finished."""

    name: ClassVar[str]

    @abstractmethod
    def run(self, runner: RunnerRef, contexts: Sequence[RunContext]) -> Iterator[RunRecord]:
        """Execute every context once; yield records in completion order."""

    def start(self) -> None:
        """Acquire what the executor needs (start or join Ray) before the first run is timed."""

    def close(self) -> None:
        """Release what the executor started (a local Ray instance)."""

    def __enter__(self) -> Executor:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
