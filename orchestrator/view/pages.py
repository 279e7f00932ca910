"""The list of run directories and one sweep's page (its arms and their verdicts)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from counterfact.orchestrator.view.files import Unreadable
from counterfact.orchestrator.view.html import attr, esc, href, link, page, table, verdict_span
from counterfact.orchestrator.view.live import panel
from counterfact.orchestrator.view.rundir import RunView, Status
from counterfact.records.arms import ArmVerdictRecord
from counterfact.records.live import LiveState
from counterfact.records.paths import SUMMARY_FILE, RunPaths
from counterfact.records.summary import took_text

LIST_ARMS = 20
"""Arms named in a row of the list (the sweep's page has them all)."""
ARMS_SHOWN = 500
"""Arms in a sweep page's tables."""
LIST_BUDGET_S = 0.05
"""Seconds the list spends indexing one running sweep's ``runs.jsonl`` for its arm names."""


def _problem(exc: Unreadable) -> str:
    return f'<span class="confirmed">unreadable: {esc(exc)}</span>'


def _more(total: int, shown: int, what: str) -> str:
    more = total - shown
    return f' <span class="muted">… and {more:,} more {what}</span>' if more > 0 else ""


def _arm_cells(run: RunView) -> str:
    arms = run.arms()
    if arms:
        shown = arms[:LIST_ARMS]
        cells = "<br>".join(f"{esc(a.arm)}: {verdict_span(a.verdict)}" for a in shown)
        return cells + _more(len(arms), len(shown), "arms")
    progress = run.indexed(LIST_BUDGET_S).progress()
    found = list(run.runs.arms)
    if found:
        note = f"no verdicts yet; {progress}" if progress else "no verdicts yet"
        names = esc(", ".join(found[:LIST_ARMS])) + _more(len(found), LIST_ARMS, "arms")
        return names + f' <span class="muted">({esc(note)})</span>'
    if progress:
        return f'<span class="muted">{esc(progress)}</span>'
    return '<span class="muted">none recorded</span>'


def _status_cell(status: Status, live: LiveState | None) -> str:
    word = f'<span data-live="status">{esc(status.word)}</span>'
    note = f'<br><span class="muted">{esc(status.note)}</span>' if status.note else ""
    if live is not None and status.active:
        runs = f"{live.runs_done:,} of {live.runs_planned:,}"
        word += f'<br>runs <span data-live="runs">{esc(runs)}</span>'
    return word + note


def _list_row(run: RunView) -> tuple[list[str], str]:
    """The row's cells, and its ``<tr>`` attributes (a live row polls its state)."""
    name = link("/sweep", run.id, run=run.id)
    try:
        live = run.live()
        status = run.status()
        cells = [name, esc(run.name()), _status_cell(status, live), _arm_cells(run)]
    except Unreadable as exc:
        return [name, "", _problem(exc), ""], ""
    attr = f' data-live-url="{href("/api/live", run=run.id)}"' if status.active else ""
    return cells, attr


def _compare_form(ids: Sequence[str]) -> str:
    def choice(name: str, chosen: int) -> str:
        options = "".join(
            f'<option value="{attr(i)}"{" selected" if n == chosen else ""}>{esc(i)}</option>'
            for n, i in enumerate(ids)
        )
        return f'<select name="{name}">{options}</select>'

    return (
        '<form class="filter" method="get" action="/compare">Compare '
        f"{choice('a', 0)} (before) with {choice('b', 1)} (after) "
        '<button type="submit">compare</button></form>'
    )


def list_page(runs: Sequence[RunView], root: str) -> str:
    """Every run directory: its sweep, status, and arm-level verdicts."""
    if not runs:
        body = (
            f"<p>No run directory in <code>{esc(root)}</code> yet: the list fills in as sweeps "
            "write into it (reload).</p>"
        )
        return page("Run directories", body)
    rows = []
    for run in runs:
        with run.lock:
            cells, polled = _list_row(run)
        rows.append(f"<tr{polled}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("run directory", "sweep", "status", "arms"))
    listing = (
        f'<table class="runs"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )
    compare = _compare_form([r.id for r in runs]) if len(runs) > 1 else ""
    intro = f"<p>Served from <code>{esc(root)}</code>; read-only.</p>"
    live = any("data-live-url" in r for r in rows)
    return page("Run directories", intro + compare + listing, live=live)


def _arm_row(run: RunView, arm: ArmVerdictRecord, counts: Counter[str | None]) -> list[str]:
    p = "—" if arm.p_adjusted is None else f"{arm.p_adjusted:.3g}"
    if arm.p_adjusted is not None and arm.p_adjusted < 1e-40:  # a normal tail: a bound, no figure
        p = "< 1e-40"
    per_question = ", ".join(f"{n} {v}" for v, n in sorted(counts.items(), key=str) if v)
    return [
        link("/arm", arm.arm, run=run.id, arm=arm.arm),
        esc(arm.intervention),
        verdict_span(arm.verdict),
        esc(arm.standing),
        esc(arm.statistical_verdict or "—"),
        esc(p),
        esc(f"{arm.questions:,} tested: breaks {arm.questions_up:,}, fixes {arm.questions_down:,}"),
        esc(per_question or "—"),
        f'<span class="claim">{esc(arm.summary)}</span>',
    ]


ARM_HEADERS = (
    "arm",
    "change",
    "verdict",
    "standing",
    "test",
    "p (adjusted)",
    "questions",
    "per-question verdicts",
    "in words",
)


def _arms_section(run: RunView) -> str:
    arms = run.arms()
    by_arm = run.verdicts.by_arm
    parts = []
    if arms:
        shown = arms[:ARMS_SHOWN]
        rows = [_arm_row(run, a, Counter(r.verdict for r in by_arm.get(a.arm, []))) for a in shown]
        parts.append(table(ARM_HEADERS, rows, "arms") + _more(len(arms), len(shown), "arms"))
    judged = {a.arm for a in arms}
    others = list(dict.fromkeys(a for a in [*by_arm, *run.runs.arms] if a not in judged))
    if others:
        rows = []
        for arm in others[:ARMS_SHOWN]:
            count = run.runs.arms.get(arm)
            base = any(r.is_baseline for r in by_arm.get(arm, [])[:1])
            recorded = "—" if count is None else f"{count.runs:,} ({count.failed:,} failed)"
            name = link("/arm", arm, run=run.id, arm=arm)
            rows.append([name, esc(recorded), "yes" if base else ""])
        title = "<h2>Other arms</h2>" if arms else "<p>No arm-level verdicts yet.</p>"
        listing = table(("arm", "runs recorded", "baseline"), rows)
        parts.append(title + listing + _more(len(others), ARMS_SHOWN, "arms"))
    return "<h2>Arms</h2>" + ("".join(parts) or "<p>No runs recorded yet.</p>")


def _facts(run: RunView, status: Status) -> str:
    items = [("status", status.word + (f" — {status.note}" if status.note else ""))]
    summary = run.summary()
    if summary is not None:
        items += [
            ("started", summary.started_at),
            ("finished", summary.finished_at),
            *([("took", took)] if (took := took_text(summary)) else []),
            ("config", summary.config_source or "(Python API)"),
            ("counterfact", summary.counterfact_version),
            ("runs failed", f"{summary.execution.runs_failed:,}"),
        ]
    damaged = [(n, i.damaged) for n, i in (("runs", run.runs), ("verdicts", run.verdicts))]
    items += [(f"{n}.jsonl", f"{d:,} damaged line(s) skipped") for n, d in damaged if d]
    if progress := run.progress():
        items.append(("indexing", f"{progress}; reload for the rest"))
    rows = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in items)
    report = ""
    if RunPaths(run.entry.path).report.is_file():
        report = f"<p>{link('/report', 'report.html', run=run.id)} (the static report)</p>"
    return f'<dl class="live">{rows}</dl>{report}'


def _bisection(run: RunView) -> str:
    found = run.bisect()
    if found is None:
        return ""
    shown = found.culprits[:ARMS_SHOWN]
    culprits = "".join(f"<li>{esc(', '.join(c))}</li>" for c in shown) or "<li>none</li>"
    culprits += _more(len(found.culprits), len(shown), "culprits")
    return (
        f"<h2>Bisection: {verdict_span(found.verdict)} ({esc(found.reason)})</h2>"
        f'<p class="claim">{esc(found.claim)}</p><ul>{culprits}</ul>'
    )


def sweep_page(run: RunView) -> str:
    """One sweep: where it is (live), then each arm's verdict, linking to its questions."""
    crumbs = [link("/sweep", run.id, run=run.id)]
    try:
        run.indexed()
        run.summary()  # read whole once: the status then comes from it, not from a second read
        status = run.status()
        # a finished sweep's last live.json is history: its records say the rest, nothing polls
        live = run.live() if status.active else None
        body = [_facts(run, status)]
        if live is not None:
            body.append(panel(run.id, live))
        if run.summary() is None and run.bisect() is None and not status.active:
            body.append(f'<p class="note">No {SUMMARY_FILE}: the sweep has not finished.</p>')
        body += [_arms_section(run), _bisection(run)]
    except Unreadable as exc:
        return page(run.name(), f"<p>{_problem(exc)}</p>", crumbs=crumbs)
    return page(run.name(), "".join(body), crumbs=crumbs, live=live is not None)
