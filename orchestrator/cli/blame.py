"""``counterfact blame CALL``: replay a recorded chat call with parts of its context removed and
name the parts that made it answer as it did.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NoReturn

import click

from counterfact.exceptions import BudgetExhausted, ConfigError, CounterfactError
from counterfact.orchestrator.cli.common import (
    GATE_EXIT,
    aborted,
    address_opt,
    ended,
    executor_opt,
    fail_on_opt,
    finish,
    fresh_opt,
    over_budget,
    report_opt,
)

if TYPE_CHECKING:
    from counterfact.orchestrator.importers.blame import BlameOptions, BlameResult
    from counterfact.orchestrator.importers.recorded import RecordedCall
    from counterfact.records.blame import BlameLine


@click.command(name="blame")
@click.argument("call", type=click.Path(exists=False, path_type=Path))
@click.option("--base-url", default=None, help="The endpoint (default OPENAI_BASE_URL).")
@click.option(
    "--api-key-env",
    default="OPENAI_API_KEY",
    show_default=True,
    help="The environment variable holding the API key (any text for a server without keys).",
)
@click.option("--span", default=None, help="The call to blame when CALL holds several.")
@click.option("--expect", default=None, help="The answer it should have given.")
@click.option(
    "--comparator",
    default="contains",
    show_default=True,
    help="How an answer is judged the same: a comparator kind (contains, exact, normalized, "
    "similarity, ...), or judge: a model decides (--judge-model, default the call's own).",
)
@click.option(
    "--judge-model",
    default=None,
    help="With --comparator judge: the judge model (default: the model the replay asks for).",
)
@click.option(
    "--judge-base-url",
    default=None,
    help="With --comparator judge: the judge's endpoint (default: the replay's, --base-url).",
)
@click.option(
    "--judge-api-key-env",
    default=None,
    help="With --comparator judge: the judge's key variable (default: --api-key-env).",
)
@click.option("--keep", multiple=True, help="A part never to suspect (repeat for more).")
@click.option("--suspects", multiple=True, help="Search these parts only (repeat for more).")
@click.option(
    "--parts",
    type=click.Choice(["messages", "paragraphs", "sentences"]),
    default="paragraphs",
    show_default=True,
    help="How finely the messages are cut into parts.",
)
@click.option(
    "--samples",
    type=click.IntRange(2, 1000),
    default=5,
    show_default=True,
    help="Seeds per probe for a sampled call (one at temperature 0 uses 2).",
)
@click.option(
    "--rank",
    type=click.Choice(["lexical", "given", "loo", "surrogate"]),
    default="lexical",
    show_default=True,
    help="Order of the search: parts sharing words with the answer first (free), as sent, by "
    "each part's effect removed alone (loo), or by a linear fit over 32 random ablations "
    "(surrogate); the order changes the probes spent, never the claim.",
)
@click.option(
    "--decide",
    type=click.Choice(["auto", "majority", "test"]),
    default="auto",
    show_default=True,
    help="auto: the majority rule on 2 seeds at temperature 0, a paired test on --samples "
    "seeds otherwise; test: always the paired test (for an API that varies at temperature 0).",
)
@click.option("--max-probes", type=click.IntRange(1), default=200, show_default=True)
@click.option("--max-culprits", type=click.IntRange(1), default=1, show_default=True)
@click.option("--model", default=None, help="Replay at this model instead of the call's own.")
@click.option(
    "--price",
    type=(click.FloatRange(0), click.FloatRange(0)),
    default=None,
    metavar="IN OUT",
    help="USD per 1,000 input and output tokens: the spend line adds usd.",
)
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Run directory.")
@click.option(
    "--concurrency",
    type=click.IntRange(1, 256),
    default=64,
    show_default=True,
    help="Calls blamed at once when CALL holds several.",
)
@click.option(
    "--budget",
    multiple=True,
    metavar="KEY=N",
    help="With a folder of calls: stop starting calls before runs=N model calls or usd=X "
    "would be spent (counted per call, over every call; repeat for both). With one call: "
    "runs=N (its replays' model calls) or usd=X (replays priced by --price, and the judge's "
    "calls) stops its search there; raise it and run again to resume.",
)
@executor_opt
@address_opt
@fresh_opt
@report_opt
@fail_on_opt
def blame(
    call: Path,
    base_url: str | None,
    api_key_env: str,
    span: str | None,
    expect: str | None,
    comparator: str,
    judge_model: str | None,
    judge_base_url: str | None,
    judge_api_key_env: str | None,
    keep: tuple[str, ...],
    suspects: tuple[str, ...],
    parts: Literal["messages", "paragraphs", "sentences"],
    samples: int,
    rank: Literal["lexical", "given", "loo", "surrogate"],
    decide: Literal["auto", "majority", "test"],
    max_probes: int,
    max_culprits: int,
    model: str | None,
    price: tuple[float, float] | None,
    out: str | None,
    concurrency: int,
    budget: tuple[str, ...],
    executor: str | None,
    address: str | None,
    fresh: bool,
    no_report: bool,
    fail_on: tuple[str, ...],
) -> None:
    """Replay the recorded chat call CALL (a request or record file, an OTLP JSON export, or a
    folder of calls) with parts of its messages removed, and find the minimal sets of parts
    that made it answer as it did, by seeded reruns.
    """
    from counterfact.orchestrator.importers.blame import BlameOptions, blame_call
    from counterfact.orchestrator.importers.calls import read_calls
    from counterfact.orchestrator.importers.recorded import safe_name

    options = BlameOptions(
        base_url=base_url or os.environ.get("OPENAI_BASE_URL") or None,
        api_key_env=api_key_env,
        parts=parts,
        comparator=comparator,
        expect=expect,
        keep=keep,
        suspects=suspects,
        samples=samples,
        rank=rank,
        decide=decide,
        max_probes=max_probes,
        max_culprits=max_culprits,
        model=model,
        price=price,
        judge_model=judge_model,
        judge_base_url=judge_base_url,
        judge_api_key_env=judge_api_key_env,
    )
    run_dir: Path | None = None
    from counterfact.orchestrator.engine.stopping.interrupt import terminate_as_interrupt

    terminate_as_interrupt()  # SIGTERM while judging: a message and 128 + 15, not a silent death
    try:
        options = replace(options, executor=_executor(executor, address))
        calls = read_calls(call, span)
        limits = _limits(budget)
        if len(calls) > 1:
            run_dir = Path(out) if out else Path("runs") / f"blame-{safe_name(call.stem)}"
            _many(calls, options, run_dir, fresh, concurrency, fail_on, limits)
            return
        options = replace(options, budget=limits)
        run_dir = Path(out) if out else Path("runs") / f"blame-{safe_name(calls[0].id)}"
        result = blame_call(calls[0], options, run_dir=run_dir, fresh=fresh)
    except BudgetExhausted as exc:
        _over_budget(exc, run_dir, not no_report)
    except CounterfactError as exc:
        ended(exc, run_dir, not no_report)
        return
    except KeyboardInterrupt:
        aborted(run_dir)
    _shown(result, run_dir, not no_report, fail_on)


def _shown(result: BlameResult, run_dir: Path, report: bool, fail_on: tuple[str, ...]) -> None:
    """One call blamed: its culprits and evidence, where the records are, the report, and the
    ``--fail-on`` exit.
    """
    from counterfact.orchestrator.cli.blame_text import render_blame
    from counterfact.orchestrator.drivers.gating.states import bisect_hits

    click.echo(render_blame(result.record, result.bisect.runs))
    click.echo(f"\nrecords: {run_dir}/ (runs.jsonl, bisect.json, blame.json)")
    finish(run_dir, report, bisect_hits(result.record, fail_on))


def _executor(kind: str | None, address: str | None) -> str | dict[str, str] | None:
    """``--executor``, or with ``--address`` the Ray cluster to join.

    Raises:
        ConfigError: ``--address`` with another executor than Ray.
    """
    if address is None:
        return kind
    if kind not in (None, "ray"):
        msg = f"--address joins a Ray cluster; it does not apply to --executor {kind}; drop one"
        raise ConfigError(msg, field="--address")
    return {"kind": "ray", "address": address}


def _limits(budget: tuple[str, ...]) -> dict[str, float]:
    """``--budget``'s limits: ``runs`` (model calls) and ``usd``, over a folder or one call."""
    from counterfact.orchestrator.importers.blame_share import parse_budget

    return parse_budget(budget)


def _over_budget(exc: BudgetExhausted[BlameResult], run_dir: Path | None, report: bool) -> NoReturn:
    """One call's budget stopped its search: what it found so far, the budget line, the
    report, exit 4 (``blame.json`` is written; raising the budget resumes it).
    """
    from counterfact.orchestrator.cli.blame_text import render_blame

    if exc.result is not None:
        click.echo(render_blame(exc.result.record, exc.result.bisect.runs))
    over_budget(exc, run_dir, report)


def _many(
    calls: Sequence[RecordedCall],
    options: BlameOptions,
    run_dir: Path,
    fresh: bool,
    concurrency: int,
    fail_on: tuple[str, ...],
    limits: dict[str, float],
) -> None:
    """Blame every call; print the first few as they end, then the summary (Ctrl-C: say what
    is kept, exit 130; the budget reached: say how to go on, exit 4).
    """
    try:
        _blame_many(calls, options, run_dir, fresh, concurrency, fail_on, limits)
    except BudgetExhausted as exc:
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(exc.exit_code) from None
    except KeyboardInterrupt:
        click.echo(
            f"interrupted: the calls that ended are in {run_dir}/blame.jsonl and those "
            "in flight keep the runs they finished; run the same command again to resume",
            err=True,
        )
        raise SystemExit(130) from None


def _sum_up(exc: BudgetExhausted[list[BlameLine]]) -> None:
    """The calls blamed before the budget stopped the rest, summed up."""
    from counterfact.orchestrator.cli.blame_text import render_summary
    from counterfact.orchestrator.importers.blame_many import most_blamed

    lines = exc.result or []
    click.echo(render_summary(lines, most_blamed(lines)))


def _blame_many(
    calls: Sequence[RecordedCall],
    options: BlameOptions,
    run_dir: Path,
    fresh: bool,
    concurrency: int,
    fail_on: tuple[str, ...],
    limits: dict[str, float],
) -> None:
    """Blame every call; print the first few as they end, then the summary."""
    from counterfact.orchestrator.cli.blame_text import SHOWN_CALLS, call_line, render_summary
    from counterfact.orchestrator.drivers.gating.states import bisect_hits
    from counterfact.orchestrator.importers.blame_many import blame_calls, most_blamed

    shown = [0]

    def done(line: BlameLine) -> None:
        shown[0] += 1
        if shown[0] <= SHOWN_CALLS:
            click.echo(call_line(line))
        elif shown[0] == SHOWN_CALLS + 1:
            click.echo(f"  ... ({len(calls) - SHOWN_CALLS} more in blame.jsonl)")

    click.echo(f"blaming {len(calls)} calls, {min(concurrency, len(calls))} at once")
    try:
        found = blame_calls(
            calls,
            options,
            run_dir=run_dir,
            fresh=fresh,
            concurrency=concurrency,
            on_done=done,
            budget=limits,
        )
    except BudgetExhausted as exc:  # the calls blamed are summed up first
        _sum_up(exc)
        raise
    click.echo(render_summary(found, most_blamed(found)))
    click.echo(f"\nrecords: {run_dir}/ (blame.jsonl, calls/<call>/blame.json)")
    if all(line.verdict is None for line in found):
        click.echo("error: no call could be blamed (blame.jsonl says why, call by call)", err=True)
        raise SystemExit(1)
    hits = [line.call for line in found if line.verdict and bisect_hits(line, fail_on)]
    if hits:
        click.echo(f"fail-on: {len(hits)} call(s) {', '.join(hits[:10])}", err=True)
        raise SystemExit(GATE_EXIT)
