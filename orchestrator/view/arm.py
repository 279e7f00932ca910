"""One arm's questions: its verdict on each (or, while the sweep runs, its runs so far),
filtered and paged, each linking to the outputs side by side.
"""

from __future__ import annotations

from counterfact.orchestrator.view.files import Unreadable
from counterfact.orchestrator.view.html import attr, esc, link, page, pager, table, verdict_span
from counterfact.orchestrator.view.index import Row
from counterfact.orchestrator.view.rundir import RunView, indexing
from counterfact.records.arms import ArmVerdictRecord

PER_PAGE = 100
"""Questions per page."""
NOTES_SHOWN = 50


def _verdict_cells(run: RunView, arm: str, row: Row) -> list[str]:
    flips = "—" if row.flips is None else f"{row.flips:,} of {row.samples:,}"
    return [
        link("/question", row.scenario, run=run.id, arm=arm, q=row.scenario),
        "baseline" if row.is_baseline else verdict_span(row.verdict),
        esc(row.reason or ""),
        esc(row.standing),
        esc(row.statistical_verdict or "—"),
        esc(flips),
        esc(f"{row.samples:,} of {row.samples_declared:,}"),
    ]


def _verdict_rows(run: RunView, arm: str, verdict: str, text: str) -> list[Row]:
    rows = run.verdicts.by_arm.get(arm, [])
    if verdict:
        rows = [r for r in rows if (r.verdict or "baseline") == verdict]
    if text:
        rows = [r for r in rows if text in r.scenario]
    return rows


def _headline(record: ArmVerdictRecord | None) -> str:
    if record is None:
        return ""
    notes = "".join(f"<li>{esc(n)}</li>" for n in record.notes[:NOTES_SHOWN])
    if len(record.notes) > NOTES_SHOWN:
        notes += f"<li>… {len(record.notes) - NOTES_SHOWN:,} more notes</li>"
    return (
        f"<p>Over the question set: {verdict_span(record.verdict)} "
        f"({esc(record.standing)}; {esc(record.method)}).</p>"
        f'<p class="claim">{esc(record.summary)}</p>' + (f"<ul>{notes}</ul>" if notes else "")
    )


def _filter_form(run: RunView, arm: str, verdict: str, text: str) -> str:
    words = ["", "confirmed", "not-confirmed", "inconclusive", "baseline"]
    options = "".join(
        f'<option value="{w}"{" selected" if w == verdict else ""}>{w or "any verdict"}</option>'
        for w in words
    )
    return (
        '<form class="filter" method="get" action="/arm">'
        f'<input type="hidden" name="run" value="{attr(run.id)}">'
        f'<input type="hidden" name="arm" value="{attr(arm)}">'
        f'<select name="verdict">{options}</select> '
        f'<input name="q" value="{attr(text)}" placeholder="question id contains"> '
        '<button type="submit">filter</button></form>'
    )


def _judged(run: RunView, arm: str, verdict: str, text: str, number: int) -> str:
    rows = _verdict_rows(run, arm, verdict, text)
    shown = rows[(number - 1) * PER_PAGE : number * PER_PAGE]
    headers = ("question", "verdict", "reason", "standing", "test", "flips", "samples")
    return (
        _filter_form(run, arm, verdict, text)
        + pager(len(rows), number, PER_PAGE, "/arm", run=run.id, arm=arm, verdict=verdict, q=text)
        + table(headers, [_verdict_cells(run, arm, r) for r in shown], "questions")
    )


def _running(run: RunView, arm: str, text: str, number: int) -> str:
    questions = [q for q in run.runs.questions.get(arm, {}) if text in q]
    shown = questions[(number - 1) * PER_PAGE : number * PER_PAGE]
    rows = []
    for q in shown:
        seeds = run.runs.seeds(arm, q)
        failed = sum(not ok for _, ok in seeds.values())
        rows.append(
            [link("/question", q, run=run.id, arm=arm, q=q), f"{len(seeds):,}", f"{failed:,}"]
        )
    return (
        '<p class="note">No verdicts yet: the runs recorded so far.</p>'
        + pager(len(questions), number, PER_PAGE, "/arm", run=run.id, arm=arm, q=text)
        + table(("question", "runs recorded", "failed"), rows, "questions")
    )


def arm_page(run: RunView, arm: str, verdict: str, text: str, number: int) -> str | None:
    """The arm's questions; None when the run directory has no such arm."""
    crumbs = [link("/sweep", run.id, run=run.id), link("/arm", arm, run=run.id, arm=arm)]
    try:
        run.indexed()
        if arm not in run.verdicts.by_arm and arm not in run.runs.arms:
            return None
        record = next((a for a in run.arms() if a.arm == arm), None)
        if arm in run.verdicts.by_arm:
            body = _judged(run, arm, verdict, text, number)
        else:
            body = _running(run, arm, text, number)
    except Unreadable as exc:
        return page(f"Arm {arm}", f"<p>unreadable: {esc(exc)}</p>", crumbs=crumbs)
    return page(f"Arm {arm}", _headline(record) + indexing(run) + body, crumbs=crumbs)
