"""``counterfact blame DIR``: many recorded calls, one culprit search each, several at once.

Each call is blamed as :func:`~counterfact.orchestrator.importers.blame.blame_call` blames one,
in its own run directory ``<out>/calls/<call>/`` (so each resumes on its own after a crash:
finished probes are read back); up to ``concurrency`` calls run at once, each search in a thread
of its own. In-process (the default) their probes share the process's one event loop; on Ray
(``executor: ray``) they share one set of worker actors on the cluster. Either way a thousand
calls that wait on an API take about the time of their slowest searches, not their sum. The calls
share one rate controller and one budget (:mod:`~counterfact.orchestrator.importers.blame_share`).
``blame.jsonl`` holds one line per call, in the calls' order, written when the last call ends;
a call that cannot be replayed is a line with its ``error``, and the others go on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from threading import Event

from counterfact.exceptions import BudgetExhausted, ConfigError, CounterfactError
from counterfact.orchestrator.importers.blame import (
    BlameOptions,
    blame_call,
    blame_plan,
    check_server,
    model_of,
)
from counterfact.orchestrator.importers.blame_share import CallSpend, Shared
from counterfact.orchestrator.importers.recorded import RecordedCall, safe_name
from counterfact.orchestrator.storage.atomic import write_atomic
from counterfact.records.blame import BlameLine, BlameRecord
from counterfact.records.paths import BLAME_FILE, BLAME_LINES_FILE

CALLS_DIR = "calls"
CLIP = 100


def _line(call: RecordedCall, record: BlameRecord, where: str) -> BlameLine:
    return BlameLine(
        call=call.id,
        verdict=record.verdict,
        reason=record.reason,
        record=where,
        culprits=record.culprits,
        culprit_text=[
            [" ".join(record.text_of(i).split())[:CLIP] for i in c] for c in record.culprits
        ],
        probes_executed=record.probes_executed,
        execution=record.execution,
        seeds_vary=record.seeds_vary,
    )


NOT_RUN_BUDGET = "not run (budget reached)"


def _one(
    call: RecordedCall,
    options: BlameOptions,
    run_dir: Path,
    fresh: bool,
    stop: Event,
    shared: Shared,
) -> BlameLine:
    where = f"{CALLS_DIR}/{safe_name(call.id)}"
    if stop.is_set():  # interrupted before this call began: left for the resume
        return BlameLine(call=call.id, verdict=None, reason=None, error="not run (interrupted)")
    blamed = not fresh and (run_dir / where / BLAME_FILE).exists()  # read back, whatever budget
    reserved = not blamed and shared.may_start()
    if not blamed and not reserved:
        return BlameLine(call=call.id, verdict=None, reason=None, error=NOT_RUN_BUDGET)
    try:
        result = blame_call(
            call, options, run_dir=run_dir / where, fresh=fresh, check=False, shared=shared
        )
    except Exception as exc:  # this call cannot be blamed (or its search broke); others go on
        shared.done(None, reserved)
        words = str(exc) if isinstance(exc, CounterfactError) else f"{type(exc).__name__}: {exc}"
        return BlameLine(call=call.id, verdict=None, reason=None, error=words)
    shared.done(CallSpend.of(result.bisect.runs), reserved)
    return _line(call, result.record, f"{where}/blame.json")  # the record stays on disk only


def blame_calls(
    calls: Sequence[RecordedCall],
    options: BlameOptions,
    *,
    run_dir: Path,
    fresh: bool = False,
    concurrency: int = 64,
    on_done: Callable[[BlameLine], None] | None = None,
    budget: Mapping[str, float] | None = None,
) -> list[BlameLine]:
    """Blame every call, ``concurrency`` at once, under one rate controller and ``budget``
    (``runs``, ``usd``: :mod:`~counterfact.orchestrator.importers.blame_share`);
    ``blame.jsonl`` in ``run_dir``.

    Raises:
        ConfigError: two calls would share a folder, or the server does not serve a model the
            calls ask for (checked once per model, before anything is sent).
        BudgetExhausted: the budget stopped calls from starting; ``blame.jsonl`` is written
            (those calls' lines say so) and the exception's ``result`` holds the lines.
    """
    folders = Counter(safe_name(c.id) for c in calls)
    twice = [f for f, k in folders.items() if k > 1]
    if twice:
        msg = f"two calls share the folder name {twice[0]!r}; rename one call's file"
        raise ConfigError(msg, field="CALL")
    models = {model_of(c, options) for c in calls if options.model or c.request.get("model")}
    for model in sorted(models):  # a call without a model gets its own error line
        check_server(options, model)
    shared = Shared(min(concurrency, len(calls)), budget)
    on_ray = _kind(options.executor) == "ray"
    if on_ray:
        _start_ray(shared, calls, options)
    else:
        options = replace(options, executor="local")  # each call's probes on the process's loop
    done: list[BlameLine] = []
    stop = Event()
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="blame")
    try:
        futures = [pool.submit(_one, c, options, run_dir, fresh, stop, shared) for c in calls]
        for future in futures:
            done.append(future.result())
            if on_done is not None:
                on_done(done[-1])
    except KeyboardInterrupt:
        stop.set()  # no call begins now; those in flight keep their finished runs (each resumes)
        pool.shutdown(wait=False, cancel_futures=True)
        ended = [f.result() for f in futures if f.done() and not f.cancelled()]
        _write_lines(run_dir, ended)  # every call that ended, in order, whichever ended first
        raise
    finally:
        pool.shutdown(wait=False)
        shared.close()  # on Ray: the actors end (runs still in flight are not recorded)
    _write_lines(run_dir, done)
    if shared.exhausted:
        raise _over_budget(shared, done)
    return done


def _kind(executor: str | Mapping[str, object] | None) -> str | None:
    """The executor kind ``BlameOptions.executor`` names."""
    if isinstance(executor, Mapping):
        kind = executor.get("kind")
        return kind if isinstance(kind, str) else None
    return executor


def _start_ray(shared: Shared, calls: Sequence[RecordedCall], options: BlameOptions) -> None:
    """Start or join Ray once, in this (the main) thread, with the ``executor:`` section of the
    first call that can be planned (a call that cannot is its own error line later).
    """
    for call in calls:
        try:
            plan = blame_plan(call, options)
        except ConfigError:
            continue
        shared.start_ray(plan)
        return


def _over_budget(shared: Shared, done: list[BlameLine]) -> BudgetExhausted[list[BlameLine]]:
    left = sum(line.error == NOT_RUN_BUDGET for line in done)
    keys = "/".join(f"--budget {k}=<more>" for k in shared.exhausted)
    msg = (
        f"budget reached: {shared.summary()} spent; {len(done) - left} calls blamed, {left} "
        f"not started. To continue, raise it ({keys}) and run the same command again: the "
        "calls blamed are read back, nothing is sent twice"
    )
    return BudgetExhausted(msg, recorded=len(done) - left, result=done)


def _write_lines(run_dir: Path, done: Sequence[BlameLine]) -> None:
    """``blame.jsonl``: the calls that ended, in order (an interrupted run writes its first)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(
        run_dir / BLAME_LINES_FILE, "".join(line.model_dump_json() + "\n" for line in done)
    )


def most_blamed(done: Sequence[BlameLine], top: int = 5) -> list[tuple[int, str, list[str]]]:
    """The culprit texts blamed in most calls: (calls, text, the part ids it had), most first."""
    seen: dict[str, tuple[set[str], set[str]]] = {}
    for line in done:
        for ids, texts in zip(line.culprits, line.culprit_text, strict=True):
            for part, text in zip(ids, texts, strict=True):
                calls, parts = seen.setdefault(text, (set(), set()))
                calls.add(line.call)
                parts.add(part)
    ranked = sorted(seen.items(), key=lambda kv: (-len(kv[1][0]), kv[0]))
    return [(len(c), text, sorted(p)) for text, (c, p) in ranked[:top]]
