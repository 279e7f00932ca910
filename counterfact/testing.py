"""Gate a regression in a test suite, the way ``counterfact run --fail-on`` gates one in CI.

::

    from counterfact.testing import assert_no_regression, run_sweep_file

    def test_the_new_retriever_changes_no_answer():
        result = run_sweep_file("configs/retriever.yaml", overrides={"samples": 8})
        assert_no_regression(result, fail_on=("confirmed", "significant"))

:func:`assert_no_regression` takes a sweep's or a bisection's result, or the run directory a
``counterfact run`` / ``bisect`` wrote, and raises :class:`AssertionError` naming every arm whose
state is one of ``fail_on`` (the ``--fail-on`` states: ``confirmed``, ``significant``,
``inconclusive``, ``underpowered`` read each challenger's arm-level verdict over every question;
``scenario-<state>`` reads the per-question rows). A sweep that did not complete (interrupted,
failed, stopped by its budget) fails too: its verdicts cannot clear a gate.

With pytest installed, the ``counterfact_sweep`` fixture (:mod:`counterfact.testing_plugin`,
registered as the ``counterfact`` pytest plugin) does both steps into the test's ``tmp_path``
and writes ``report.html`` when the gate fails. This module itself imports neither pytest nor
the engine until a function is called.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from counterfact.exceptions import ConfigError, CounterfactWarning

if TYPE_CHECKING:
    from counterfact.orchestrator.drivers.bisect import BisectResult
    from counterfact.orchestrator.drivers.gating.reading import GateReading
    from counterfact.orchestrator.drivers.sweep import SweepResult

DEFAULT_FAIL_ON = ("confirmed",)
"""What a gate fails on unless told: a challenger whose arm-level verdict is ``confirmed`` (it
changed the answer on a majority of seeds, beyond the baseline's own noise). Add
``significant`` for the paired test, ``inconclusive`` to fail on an arm that did not take
effect (or could not be judged)."""

HITS_SHOWN = 20
"""Matches listed in a failure message (all are counted)."""

Overrides = Mapping[str, object] | Sequence[str]
"""``{"samples": 8, "arms.1.facets.model": "large"}`` or ``["samples=8", ...]`` (``--set``)."""


def override_strings(overrides: Overrides) -> list[str]:
    """``overrides`` as ``--set`` strings: a mapping's values written as JSON (which the YAML
    reading of ``--set`` reads back as the same value; None drops the key).

    Raises:
        ConfigError: a value that is not JSON (a path, an object).
    """
    if isinstance(overrides, str):
        return [overrides]
    if not isinstance(overrides, Mapping):
        return [str(o) for o in overrides]
    out = []
    for key, value in overrides.items():
        try:
            text = json.dumps(value)
        except (TypeError, ValueError) as exc:
            msg = f"overrides[{key!r}]: {type(value).__name__} is not a JSON value; give text"
            raise ConfigError(msg, field="overrides") from exc
        out.append(f"{key}={text}")
    return out


def run_sweep_file(
    config: str | Path,
    *,
    overrides: Overrides = (),
    executor: str | None = None,
    out: str | Path | None = None,
    fresh: bool = False,
    cache_dir: str | Path | None = None,
) -> SweepResult:
    """Run the sweep file ``config`` as ``counterfact run`` would, and return its result.

    Args:
        config: the sweep file (relative targets in it resolve against its folder).
        overrides: ``--set`` overrides, as a mapping of dotted keys to values or as
            ``"key=value"`` strings; a value None drops the key.
        executor: ``"local"`` (in-process) or ``"ray"``; None keeps the file's choice.
        out: the run directory (resumed when it holds records); None keeps every record in
            memory.
        fresh: move an existing ``out`` aside (never deleted) instead of resuming it.
        cache_dir: the run cache shared across sweeps (None: the file's ``cache_dir``, if any).

    Raises:
        ConfigError: the file or an override is refused; nothing has run.
        RunDirectoryError: ``out`` cannot be resumed as asked.
        RunsFailed: every run failed, or the runner evidently cannot work.
    """
    from counterfact.orchestrator.config.loading import load_sweep
    from counterfact.orchestrator.drivers.sweep import run_sweep

    sweep = load_sweep(config, overrides=override_strings(overrides), executor=executor)
    for note in sweep.notes:
        warnings.warn(note, CounterfactWarning, stacklevel=2)
    return run_sweep(
        sweep,
        run_dir=Path(out) if out is not None else None,
        fresh=fresh,
        cache_dir=Path(cache_dir) if cache_dir is not None else None,
    )


def read_gate(
    source: SweepResult | BisectResult | str | Path,
    fail_on: str | Iterable[str] = DEFAULT_FAIL_ON,
) -> GateReading:
    """What a gate reads from ``source`` (a result, or a run directory), without asserting.

    Raises:
        ConfigError: an unknown ``fail_on`` state.
        RunDirectoryError: a run directory without records, or with a damaged one.
    """
    from counterfact.orchestrator.drivers.gating.reading import (
        gate_states,
        read_result,
        read_run_dir,
    )

    states = gate_states(fail_on)
    if isinstance(source, str | Path):
        return read_run_dir(source, states)
    return read_result(source, states)


def assert_no_regression(
    source: SweepResult | BisectResult | str | Path,
    fail_on: str | Iterable[str] = DEFAULT_FAIL_ON,
) -> GateReading:
    """Fail (:class:`AssertionError`) when an arm of ``source`` ended in a ``fail_on`` state,
    or when the sweep did not complete; otherwise return what the gate read.

    Args:
        source: a :class:`~counterfact.SweepResult` or :class:`~counterfact.BisectResult`, or a
            run directory written by ``counterfact run`` / ``bisect`` / ``import``.
        fail_on: ``--fail-on`` states (one string is one state); default ``("confirmed",)``.

    Raises:
        AssertionError: the message names each matching arm with its state and arm-level
            summary, and the run directory.
        ConfigError: an unknown ``fail_on`` state.
        RunDirectoryError: a run directory without records, or with a damaged one.
    """
    __tracebackhide__ = True  # pytest shows the test's line, not this one
    reading = read_gate(source, fail_on)
    if reading.warning is not None:
        warnings.warn(reading.warning, CounterfactWarning, stacklevel=2)
    if not reading.passed:
        raise AssertionError(failure_message(reading))
    return reading


def failure_message(reading: GateReading, report: Path | None = None) -> str:
    """The lines an :class:`AssertionError` carries: what matched, why, and where to look."""
    states = ", ".join(reading.states)
    lines = []
    if reading.status != "complete":
        lines.append(
            f"{reading.what} did not complete (status {reading.status!r}): its verdicts cannot "
            "clear the gate"
        )
    if reading.hits:
        lines.append(f"{reading.what}: {len(reading.hits)} match(es) of fail_on ({states}):")
        lines += [f"  {hit}" for hit in reading.hits[:HITS_SHOWN]]
        if len(reading.hits) > HITS_SHOWN:
            lines.append(f"  and {len(reading.hits) - HITS_SHOWN} more")
        lines += [f"  | {line}" for line in reading.details[:HITS_SHOWN]]
    if reading.run_dir is not None:
        lines.append(f"records: {reading.run_dir}")
    if report is not None:
        lines.append(f"report: {report}")
    return "\n".join(lines)


class SweepGate:
    """The ``counterfact_sweep`` fixture's value: call it with a sweep file to run the sweep
    into its own folder and fail the test on a ``fail_on`` state.

    Example::

        def test_no_regression(counterfact_sweep):
            result = counterfact_sweep("configs/mine.yaml", overrides={"samples": 8})
            assert result.row("new-retriever").verdict == "not-confirmed"
    """

    def __init__(self, folder: Path, *, executor: str | None = None) -> None:
        self.folder = folder
        """Where each call's run directory goes (the test's ``tmp_path``)."""
        self.executor = executor
        """The executor every call uses unless it names one (None: each file's choice)."""
        self._calls = 0

    def __call__(
        self,
        config: str | Path,
        *,
        fail_on: str | Iterable[str] = DEFAULT_FAIL_ON,
        overrides: Overrides = (),
        executor: str | None = None,
        out: str | Path | None = None,
        cache_dir: str | Path | None = None,
        report: bool = True,
    ) -> SweepResult:
        """Run ``config`` (as :func:`run_sweep_file`) and assert no regression.

        Args:
            config: the sweep file.
            fail_on: as for :func:`assert_no_regression`.
            overrides: as for :func:`run_sweep_file`.
            executor: this call's executor (default the fixture's, then the file's).
            out: the run directory (default ``<tmp_path>/<file stem>-<n>``, new per call).
            cache_dir: as for :func:`run_sweep_file`.
            report: write ``report.html`` into the run directory when the gate fails.

        Raises:
            AssertionError: as :func:`assert_no_regression` (with the report's path).
        """
        __tracebackhide__ = True
        from counterfact.orchestrator.drivers.gating.reading import gate_states

        states = gate_states(fail_on)  # a wrong state is refused before anything runs
        self._calls += 1
        where = Path(out) if out is not None else self.folder / f"{Path(config).stem}-{self._calls}"
        result = run_sweep_file(
            config,
            overrides=overrides,
            executor=executor or self.executor,
            out=where,
            cache_dir=cache_dir,
        )
        reading = read_gate(result, states)
        if reading.warning is not None:
            warnings.warn(reading.warning, CounterfactWarning, stacklevel=2)
        if not reading.passed:
            page = _report(where) if report else None
            raise AssertionError(failure_message(reading, page))
        return result


def _report(run_dir: Path) -> Path | None:
    """``report.html`` for a failed gate; None when it cannot be drawn (the records stand)."""
    from counterfact.orchestrator.drivers.outputs.report import write_report

    try:
        return write_report(run_dir)
    except Exception as exc:  # the assertion, not the report, is what the test must show
        warnings.warn(f"report.html not written: {exc}", CounterfactWarning, stacklevel=3)
        return None
