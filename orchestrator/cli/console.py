"""What ``run`` and ``import inspect`` print after a sweep: the answer first.

A sweep over several questions leads with one line per challenger (its arm-level verdict), the
notes a reader must know, a handful of the questions that moved most, then where the records
are and what the runs cost. The per-question table and claims come with ``--detail``, under a
note that a row's tier is not a test (and are always in ``report.html`` and
``verdicts.jsonl``). A one-question sweep prints its table: that
is one line per challenger already.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from counterfact.orchestrator.drivers.sweep import SweepResult
    from counterfact.records.arms import ArmVerdictRecord
    from counterfact.records.summary import SweepSummary

NOTABLE_SHOWN = 5
"""Questions listed under the arm lines (the most moved, over every challenger)."""
ROWS_NOTE = (
    "note: a per-question row's tier is not a test: on an A/A arm a few percent of rows read "
    "confirmed, about one in five when every epoch is a copy (docs/statistics.md, per-question "
    "rows of an eval set); the arm-level verdicts above are the test"
)
"""Printed above the per-question table of a sweep over several questions."""


def show(result: SweepResult, run_dir: Path, *, detail: bool) -> None:
    """Print the sweep's answer, then (with ``detail``, or one question) its table and claims."""
    summary = result.summary
    if len(summary.scenarios) > 1 and summary.arms:
        _arm_block(summary)
        if detail:
            click.echo("")
            click.echo(ROWS_NOTE)
            _detail(result)
        else:
            click.echo(
                f"\nper-question table and claims ({len(result.rows):,} rows): --detail, "
                "report.html, verdicts.jsonl"
            )
    else:
        _detail(result)
    _judge_notes(result)
    click.echo(f"\nrecords: {run_dir}/ (arms.jsonl, verdicts.jsonl, summary.json, runs.jsonl)")
    click.echo(spend_line(summary))
    waited = summary.execution.runs_rate_limited
    if waited:
        click.echo(
            f"rate limits: {waited:,} run(s) waited on a rate limit and then "
            "ran (not a doubt: their answers stand)"
        )


def _judge_notes(result: SweepResult) -> None:
    """The model judge's measured noise, after the table (nothing without a judge)."""
    from counterfact.verdicts.report.judgenote import judge_notes

    for note in judge_notes(result.summary.judges, result.rows):
        click.echo(f"note: {note}")


def _arm_block(summary: SweepSummary) -> None:
    stats = summary.statistics
    samples = summary.config.get("samples")
    seeds = f" x {samples} seeds" if isinstance(samples, int) else ""
    family = next((a.adjustment.family_size for a in summary.arms if a.adjustment), 0)
    adjust = (
        f", {stats.adjust} over {family} challenger{'s' if family != 1 else ''}"
        if stats and family
        else ""
    )
    click.echo(
        f"arm-level verdicts over {len(summary.scenarios):,} questions{seeds} "
        f"(sign-flip test over questions{adjust}; alternative "
        f"{stats.alternative if stats else 'greater'}):"
    )
    shared = set.intersection(*(set(a.notes) for a in summary.arms))
    for record in summary.arms:
        click.echo(f"  {record.summary}")
        for note in record.notes:
            if note not in shared:
                click.echo(f"    note: {note}")
    for note in sorted(shared):
        click.echo(f"  note: {note}")
    moved = _most_moved(summary.arms)
    if moved:
        click.echo("most moved questions:")
        for line in moved:
            click.echo(f"  {line}")


def _most_moved(arms: list[ArmVerdictRecord]) -> list[str]:
    found = [(abs(q.moved) / max(q.pairs, 1), a.arm, q) for a in arms for q in a.notable]
    found.sort(key=lambda x: (-x[0], x[1], x[2].question))
    out = []
    for _, arm, q in found[:NOTABLE_SHOWN]:
        way = "more" if q.moved > 0 else "less"
        out.append(
            f"{q.question} / {arm}: flipped on {abs(q.moved)} more seed(s) of {q.pairs} "
            f"than the baseline"
            if way == "more"
            else f"{q.question} / {arm}: flipped on {abs(q.moved)} fewer seed(s) of {q.pairs} "
            "than the baseline"
        )
    return out


def _detail(result: SweepResult) -> None:
    """The verdict table and the claims worth reading (every claim is in verdicts.jsonl)."""
    click.echo(result.table())
    click.echo("")
    note = result.sequential_note()
    if note is not None:
        click.echo(note)
    quiet = 0
    for row in result.rows:
        if row.is_baseline:
            continue
        if row.verdict == "not-confirmed":
            quiet += 1
            continue
        click.echo(f"- {row.scenario}/{row.arm}: {row.claim}")
    if quiet:
        from counterfact.records.paths import VERDICTS_FILE  # the records load with a result

        click.echo(
            f"- {quiet} arm(s) not confirmed (their claims say why); every claim is in "
            f"{VERDICTS_FILE}"
        )


def spend_line(summary: SweepSummary) -> str:
    """``spend: usd 0.45, tokens 123,456 over 40 runs (baseline usd 0.07, ...)``, or that no
    run reported a cost (the report's header says the same).
    """
    from counterfact.verdicts.report.arms import spend_text

    return f"spend: {spend_text(summary.execution.spend)}"
