"""Every error and warning counterfact raises, in one place.

Hierarchy::

    CounterfactError                 base of everything raised on purpose
    ├── ConfigError                  a sweep declaration is wrong (field path + fix); exit code 2
    │   ├── RefusalError             rule 8: refused before any run is spent
    │   ├── RunnerImportError        a ``module:attr`` / ``file.py:attr`` target cannot be loaded
    │   └── CodeInDataError          a data file (questions, a recorded call) names code: refused,
    │                                nothing imported or called
    ├── RunDirectoryError            the run directory cannot be used as asked; exit code 2
    │   └── ResumeConflictError      resuming would change what recorded runs mean
    ├── RecordWriteError             a record could not be written (disk full, read-only);
    │                                what was written stays sound; exit code 1
    ├── RunnerReturnError            a runner returned something that is not a run result
    ├── ChatReplyError               the chat runner got no usable reply: the API is out of
    │                                credit, or the reply outlasted its deadline or its size cap
    ├── ImportedRunError             an imported log's sample failed (or has no score): replayed
    │                                as a failed run
    ├── RunCancelled                 a runner's call was cancelled from inside the run
    ├── EventLoopMisuse              a runner stopped, closed or broke the event loop it shares
    │   └── EventLoopBlocked         a runner blocked that loop past the run's timeout: the
    │                                loop's runs fail, the sweep goes on on a fresh loop
    ├── ScoringError                 a comparator or similarity measure failed or misbehaved
    │   └── ComparisonFailed         one output could not be compared: that seed is unscored
    │       │                        and in doubt, the sweep is still judged
    │       ├── ComparisonTimeout    it outlasted the comparator's deadline
    │       ├── JudgeUnparseable     a model judge's reply to it was no verdict
    │       └── JudgeUnavailable     a model judge refused it, or stayed down through its
    │                                retries
    ├── ExecutorError                the executor could not run the plan (Ray failed to start ...)
    ├── SweepInterrupted             Ctrl-C, SIGTERM or SIGHUP stopped the sweep; what finished is
    │                                recorded; exit code 128 + the signal (130, 143, 129)
    ├── BudgetExhausted              the spend budget stopped scheduling; what ran is judged;
    │                                exit code 4
    ├── RateLimited                  raised by a runner: the API said "slow down" (not a failure)
    └── RunsFailed                   every run failed, or the runner broke its contract early;
                                     what ran is recorded; exit code 1

    Terminated (a KeyboardInterrupt) SIGTERM or SIGHUP outside a sweep's runs (while preparing,
                                     judging or writing the report) of ``run``, ``bisect`` or
                                     ``blame``: the CLI says what is recorded and exits 128 +
                                     the signal

    CounterfactWarning               a result is valid but weak (never raised, only warned)
    └── DegenerateBandWarning        the baseline never varied, so its null band has no width

User-input errors (``ConfigError``, ``RunDirectoryError``) carry one readable line; the CLI prints
that line without a traceback and exits with code 2. Every class says its exit code
(:attr:`CounterfactError.exit_code`, as httpx's errors carry their request), and errors about a
thing carry it: ``ConfigError.field``, ``RunDirectoryError.run_dir``, ``SweepInterrupted.recorded``
and ``.planned``, ``BudgetExhausted.result`` and ``RunsFailed.result``.
"""

from __future__ import annotations

from typing import Generic, TypeVar

R = TypeVar("R", covariant=True)
"""What an error that stops work carries of it: ``run`` / :func:`compare_arms` raise with a
``SweepResult``, ``bisect`` / :func:`find_culprits` with a ``BisectResult``, ``blame`` with a
``BlameResult`` (``blame DIR``: the ``BlameLine`` of every call blamed). A driver's docstring
names it (``BudgetExhausted[SweepResult]``), so a caller handing the error to a function typed
for it reads ``.result`` typed, with no ``isinstance``."""


class CounterfactError(Exception):
    """Base class of every error counterfact raises on purpose."""

    exit_code: int = 1
    """The CLI's exit code when this error ends a command (1: the engine's own failures)."""


class ConfigError(CounterfactError):
    """A sweep declaration is wrong.

    The message names the field by its path (``arms[2].facets``), what was received, what is
    allowed and how to fix it.
    """

    exit_code = 2

    def __init__(self, message: str, *, field: str | None = None) -> None:
        self.field = field
        super().__init__(f"{field}: {message}" if field else message)


class RefusalError(ConfigError):
    """A declaration rule 8 refuses before the first run (duplicate arms, ...)."""


class RunnerImportError(ConfigError):
    """A ``module:attr`` / ``path/to/file.py:attr`` target cannot be imported or is not callable."""


class CodeInDataError(ConfigError):
    """A data file (a question file, an imported log, a recorded call) names code: a callable
    target, or a check the sweep file does not declare.

    Data is untrusted: only the sweep file (or the Python caller) may name code. Refused while
    the file is read, before anything is imported or called; see docs/explanation/what-runs-code.md.
    """


class RunDirectoryError(CounterfactError):
    """The run directory cannot be used as asked; counterfact never overwrites records."""

    exit_code = 2

    def __init__(self, message: str, *, run_dir: object = None) -> None:
        self.run_dir = run_dir
        """The directory in question (a ``pathlib.Path``; None when unknown)."""
        super().__init__(message)


class ResumeConflictError(RunDirectoryError):
    """Resuming would change what recorded runs mean (runner, an arm, a scenario's inputs)."""


class RecordWriteError(CounterfactError):
    """A record file could not be written (no space left, a read-only file system, ...). What was
    written before stays sound: free the space and run the same command again to resume.
    """

    def __init__(self, message: str, *, path: object = None, run_dir: object = None) -> None:
        self.path = path
        """The file that could not be written."""
        self.run_dir = run_dir
        """Its run directory (None: no run directory)."""
        super().__init__(message)


class RunnerReturnError(CounterfactError):
    """A runner returned a value that is not a string, a mapping or a ``RunResult``.

    Raised inside the run and recorded as that run's error; it never ends a sweep.
    """


class ChatReplyError(CounterfactError):
    """The chat runner (``runner: {kind: chat}``) got no usable reply: the API refused for want
    of credit (an HTTP 429 ``insufficient_quota``, which no wait helps), the reply did not finish
    within ``runner.timeout_s``, or it grew past ``runner.max_reply_bytes``.

    Raised inside the run and recorded as that run's error, in the server's words where it gave
    any; when every run fails alike the sweep stops early (:class:`RunsFailed`).
    """


class ImportedRunError(CounterfactError):
    """A sample of an imported log (Inspect AI) failed there, or lacks the score judged.

    Raised inside the replayed run and recorded as that run's error; it never ends the import.
    """


class RunCancelled(CounterfactError):
    """An ``async def`` runner's call ended in ``asyncio.CancelledError`` that counterfact did
    not ask for (a task the runner awaited was cancelled). Recorded as that run's error.
    """


class EventLoopMisuse(CounterfactError):
    """A runner stopped or closed the event loop it runs on (``loop.stop()``), or scheduled a
    callback or task that raised ``KeyboardInterrupt`` or ``SystemExit`` there: what would end the
    loop every run shares. The misuse is ignored and recorded as that run's error.
    """


class EventLoopBlocked(EventLoopMisuse):
    """A runner blocked the event loop it shares (``time.sleep``, a busy loop or another blocking
    call inside ``async def``) for longer than the run's ``timeout_s``, so no timeout on it could
    fire. Every run on that loop is recorded with this error, the loop is given up, and the sweep
    goes on on a fresh one.
    """


class ScoringError(CounterfactError):
    """A comparator or similarity measure failed, or returned values outside its contract."""


class ComparisonFailed(ScoringError):
    """One *output* could not be compared with the reference. That comparison failed: the seed
    is left unscored, as a failed run is, and its row is in doubt under the subclass's code
    (:attr:`doubt`); the rest of the sweep is judged. A failure on the reference, or a judge
    that cannot be asked at all, is a plain :class:`ScoringError` (nothing can be judged).
    """

    doubt: str = "comparison-timed-out"
    """The doubt code the seeds it left unscored are listed under (``records.DoubtCode``)."""


class ComparisonTimeout(ComparisonFailed):
    """A comparator could not judge one output within its time bound (a regex pattern that
    backtracks catastrophically on it): ``comparison-timed-out``.
    """

    doubt = "comparison-timed-out"


class JudgeUnparseable(ComparisonFailed):
    """A model judge (``comparator: {kind: judge}``) replied to one output with something that
    is not a verdict (its first line is not exactly ``SAME`` or ``DIFFERENT``):
    ``judge-unparseable``. Never a flip.
    """

    doubt = "judge-unparseable"


class JudgeUnavailable(ComparisonFailed):
    """A model judge gave no answer on one output: it refused the request (an HTTP 4xx such as
    a content filter's 400), or it stayed down (5xx, timeouts, rate limits past the wait
    allowed) through its retries: ``judge-unavailable``. Not kept in ``judge.jsonl``: a resume
    asks it again.
    """

    doubt = "judge-unavailable"


class ExecutorError(CounterfactError):
    """The executor could not run the plan (Ray did not start, the cluster is unreachable ...)."""


class SweepInterrupted(CounterfactError):
    """The sweep was stopped (Ctrl-C) before its plan finished; finished runs are recorded and a
    rerun of the same command resumes.
    """

    exit_code = 130
    """128 + the signal that stopped it, as a shell reports it: 130 for Ctrl-C (SIGINT), 143
    for SIGTERM, 129 for SIGHUP."""

    def __init__(
        self, message: str, *, recorded: int, planned: int, signal: int | None = None
    ) -> None:
        self.recorded = recorded
        self.planned = planned
        self.signal = signal
        """The signal's number (None: Ctrl-C or a stop asked for in code)."""
        if signal is not None:
            self.exit_code = 128 + signal
        super().__init__(message)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived while no sweep's runs were executing (the graceful stop holds
    those): before the runs, while judging them or while writing the report. A
    :class:`KeyboardInterrupt`, so it unwinds what Ctrl-C unwinds; the CLI names the signal,
    says every finished run is recorded, and exits with :attr:`exit_code`.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        """The signal's number."""
        self.exit_code = 128 + signum
        """As a shell reports a process the signal ended: 143 for SIGTERM, 129 for SIGHUP."""


class BudgetExhausted(CounterfactError, Generic[R]):
    """Scheduling stopped before the recorded spend plus the runs in flight would pass a
    ``budget`` limit. What ran is recorded and judged (``summary.json`` says
    ``budget-exhausted``); raising the limit and running again resumes with nothing run twice.
    The CLI exits with :attr:`exit_code` 4.
    """

    exit_code = 4

    def __init__(self, message: str, *, recorded: int, result: R | None = None) -> None:
        self.recorded = recorded
        self.result: R | None = result
        """The sweep's, search's or blame's result, judged on the runs that were affordable
        (None when the stop came before anything was judged)."""
        super().__init__(message)


class RateLimited(CounterfactError):
    """Raise from a runner when the API it calls refused for now (HTTP 429, "slow down").

    The run is neither failed nor retried as a sample: it waits ``retry_after`` seconds (else an
    exponential backoff with full jitter) and runs again, and the sweep's concurrency controller
    lowers the number of runs in flight. HTTP 429 errors of httpx, requests, openai, anthropic
    and aiohttp are recognised without raising this.
    """

    def __init__(self, message: str = "rate limited", *, retry_after: float | None = None) -> None:
        self.retry_after = retry_after
        """Seconds the API asked to wait (its ``Retry-After``); None: back off exponentially."""
        super().__init__(message)


class RunsFailed(CounterfactError, Generic[R]):
    """No run produced evidence: every run failed, or the first runs showed the runner cannot
    work (a return value the contract refuses, the same exception on every arm) and scheduling
    stopped. What ran is recorded; ``summary.json`` (or ``bisect.json``) says ``failed``.
    """

    def __init__(self, message: str, *, recorded: int, result: R | None = None) -> None:
        self.recorded = recorded
        self.result: R | None = result
        """The sweep's or bisection's result when its records were judged (else None)."""
        super().__init__(message)


class CounterfactWarning(UserWarning):
    """A result is valid but weak; the record still holds it."""


class DegenerateBandWarning(CounterfactWarning):
    """The baseline's similarities are all equal, so the null band has no width."""
