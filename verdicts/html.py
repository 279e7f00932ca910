"""``report.html``: one self-contained page built from a run directory's records.

Pure: records in, HTML text out (the orchestrator reads the files and writes the page). Nothing
is loaded from the network — styles are inline, figures are inline SVG (see
:mod:`counterfact.verdicts.plots`), and there is no script — so the page opens offline and
prints. Every challenger row gets a figure (up to :data:`MAX_FIGURES`; the rest are listed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

from counterfact.verdicts.plots import ProbeBar, Series, arm_figure, probes_figure
from counterfact.verdicts.records import BisectRecord, DoubtRecord, SweepSummary, VerdictRecord

MAX_FIGURES = 200
"""Challenger rows drawn; beyond this the page says how many were left out (drawing takes
about 50 ms a figure)."""

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:1100px;
color:#222;line-height:1.4}
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:1px solid #ccc;margin-top:2em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
td,th{border:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f4f4f4}.confirmed{color:#b00020;font-weight:600}.significant{font-weight:600}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.1em 1em}dl.meta dt{color:#666}
figure{margin:1em 0;page-break-inside:avoid}figure svg{max-width:100%;height:auto}
.claim{font-size:.9em;color:#333}code{background:#f6f6f6;padding:0 .2em}
@media print{body{max-width:none;margin:0}h2{page-break-before:auto}}
"""


@dataclass(frozen=True)
class FailedRun:
    """A failed run, as the report lists it."""

    scenario: str
    arm: str
    seed: int
    error: str


@dataclass(frozen=True)
class ReportData:
    """Everything the page shows, read from one run directory."""

    title: str
    summary: SweepSummary | None = None
    rows: Sequence[VerdictRecord] = ()
    failed: Sequence[FailedRun] = ()
    failed_total: int = 0
    bisect: BisectRecord | None = None
    floors: dict[str, float] = field(default_factory=dict)
    """Null-band floor per scenario."""


def render(data: ReportData) -> str:
    """The whole page."""
    parts = [f"<h1>{escape(data.title)}</h1>", _header(data)]
    if data.rows:
        parts += [_pooled(data), _verdict_table(data.rows), _rollup(data), _scenarios(data)]
    if data.bisect is not None:
        parts.append(_bisection(data.bisect))
    parts.append(_failures(data))
    body = "\n".join(p for p in parts if p)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(data.title)}</title><style>{STYLE}</style></head>"
        f"<body>\n{body}\n</body></html>\n"
    )


def _dl(items: Sequence[tuple[str, object]]) -> str:
    cells = "".join(
        f"<dt>{escape(k)}</dt><dd>{escape(str(v))}</dd>" for k, v in items if v is not None
    )
    return f'<dl class="meta">{cells}</dl>'


def _header(data: ReportData) -> str:
    record = data.summary or data.bisect
    if record is None:
        return ""
    items: list[tuple[str, object]] = [
        ("status", getattr(record, "status", None)),
        ("config", record.config_source or "(Python API)"),
        ("overrides", " ".join(record.overrides) or None),
        ("counterfact", record.counterfact_version),
        ("started", record.started_at),
        ("finished", record.finished_at),
        ("runs used", record.runs_used),
        ("runs reused (resume)", record.runs_reused),
        ("failure", getattr(record, "failure", None)),
        ("runner version", record.config.get("runner_version")),
    ]
    if data.bisect is not None:
        b = data.bisect
        items += [
            ("probes", f"{b.probes_executed} of {b.max_probes} budget; decide: {b.decide}"),
            ("speculative unused", b.speculative_unused or None),
        ]
    if data.summary is not None:
        s = data.summary
        stats = s.statistics
        items += [
            ("runs from cache", s.runs_from_cache),
            ("runs failed", s.runs_failed),
            ("statistics", None if stats is None else _stats_text(s)),
        ]
        if s.sequential is not None:
            q = s.sequential
            items.append(
                (
                    "sequential",
                    f"max_samples {q.max_samples}, waves of {q.wave}; "
                    f"{q.runs_recorded} of {q.runs_at_max_samples} runs recorded "
                    f"({q.runs_saved} saved)",
                )
            )
    return _dl(items)


def _stats_text(summary: SweepSummary) -> str:
    s = summary.statistics
    assert s is not None
    return (
        f"alpha {s.alpha:g}, adjust {s.adjust}, family {s.family}, pairing {s.pairing}, "
        f"decide {s.decide}, alternative {s.alternative}"
    )


def _p(row: VerdictRecord) -> str:
    if row.test is None:
        return ""
    p = row.test.p_adjusted if row.test.p_adjusted is not None else row.test.p_value
    return f"{p:.3g}"


def _verdict_table(rows: Sequence[VerdictRecord]) -> str:
    head = (
        "<tr><th>scenario</th><th>arm</th><th>tier</th><th>reason</th><th>statistical</th>"
        "<th>flips</th><th>flip-rate 95% CI</th><th>p (adj.)</th><th>cost class</th>"
        "<th>standing</th></tr>"
    )
    lines = [head]
    for r in rows:
        tier = "baseline" if r.is_baseline else str(r.verdict)
        ci = (
            ""
            if r.flip_rate_ci is None
            else f"[{r.flip_rate_ci.low:.2f}, {r.flip_rate_ci.high:.2f}]"
        )
        flips = "n/a" if r.flips is None else f"{r.flips}/{r.samples}"
        stat = r.statistical_verdict or (r.statistical_verdict_withheld and "withheld") or ""
        lines.append(
            f'<tr data-scenario="{escape(r.scenario)}" data-arm="{escape(r.arm)}">'
            f"<td>{escape(r.scenario)}</td><td>{escape(r.arm)}</td>"
            f'<td class="{escape(tier)}">{escape(tier)}</td><td>{escape(r.reason or "")}</td>'
            f'<td class="{escape(stat)}">{escape(stat)}</td><td>{flips}</td><td>{ci}</td>'
            f"<td>{_p(r)}</td><td>{escape(r.cost_class or '')}</td>"
            f'<td class="{escape(r.standing)}">{escape(_standing_cell(r))}</td></tr>'
        )
    return '<h2>Verdicts</h2><table class="verdicts">' + "".join(lines) + "</table>"


def _pooled(data: ReportData) -> str:
    """Each challenger's pooled test and effect, first: often the one result that survives the
    adjustment over many per-scenario tests.
    """
    if data.summary is None or not data.summary.pooled:
        return ""
    lines = [
        "<tr><th>challenger</th><th>pooled test</th><th>discordant pairs</th><th>p</th>"
        "<th>p (adj.)</th><th>pooled effect, 95% CI (clustered)</th><th>scenarios</th></tr>"
    ]
    for r in data.summary.pooled:
        e = r.effect
        effect = "" if e is None else f"{e.diff:+.2f} [{e.low:+.2f}, {e.high:+.2f}]"
        agree = f"{r.scenarios}"
        if e is not None and e.heterogeneous:
            named = f"; {', '.join(e.disagreeing)} stand out" if e.disagreeing else ""
            agree += f" — effects disagree (p = {e.heterogeneity_p:.2g}){named}"
        lines.append(
            f'<tr data-pooled-arm="{escape(r.arm)}"><td>{escape(r.arm)}</td>'
            f'<td class="{escape(r.statistical_verdict)}">{escape(r.statistical_verdict)}</td>'
            f"<td>{r.n10} vs {r.n01} of {r.pairs}</td><td>{r.p_value:.3g}</td>"
            f"<td>{r.p_adjusted:.3g}</td><td>{effect}</td><td>{escape(agree)}</td></tr>"
        )
    method = escape(data.summary.pooled[0].method)
    return (
        f"<h2>Pooled across scenarios</h2><p>{method}, adjusted over the challengers.</p>"
        f'<table class="pooled">{"".join(lines)}</table>'
    )


def _standing_cell(row: VerdictRecord) -> str:
    if row.standing == "not-assessed":
        return ""
    return row.standing if not row.reasons else f"{row.standing} ({len(row.reasons)})"


def _reasons(reasons: Sequence[DoubtRecord], standing: str) -> str:
    """The reasons for doubt, one line each with the seeds that witness it."""
    if not reasons:
        return (
            "<p>Standing: <b>sure</b> — every check that bears on it ran and passed.</p>"
            if (standing == "sure")
            else ""
        )
    items = []
    for d in reasons:
        floor = "at least " if d.at_least else ""
        seeds = ""
        if d.seeds:
            more = f" and {d.seeds_omitted} more" if d.seeds_omitted else ""
            seeds = f"; seeds {', '.join(map(str, d.seeds))}{more}"
        items.append(
            f"<li><code>{escape(d.code)}</code> ({floor}{d.count}): {escape(d.detail)}"
            f"{escape(seeds)}</li>"
        )
    head = "not sure" if standing == "not-sure" else "not assessed; doubts all the same"
    return f'<p>Standing: <b>{head}</b></p><ul class="reasons">{"".join(items)}</ul>'


def _rollup(data: ReportData) -> str:
    if data.summary is None or not data.summary.rollup:
        return ""
    items = "".join(f"<li>{escape(r.summary)}</li>" for r in data.summary.rollup)
    return f"<h2>Each arm across scenarios</h2><ul>{items}</ul>"


def _series(row: VerdictRecord) -> Series:
    ci = row.flip_rate_ci
    rate = row.flips / row.samples if row.flips is not None and row.samples else None
    return Series(
        row.arm, row.similarities or [], rate, ci.low if ci else None, ci.high if ci else None
    )


def _scenarios(data: ReportData) -> str:
    parts: list[str] = []
    drawn = 0
    base: dict[str, VerdictRecord] = {r.scenario: r for r in data.rows if r.is_baseline}
    for scenario in dict.fromkeys(r.scenario for r in data.rows):
        parts.append(f"<h2>Scenario {escape(scenario)}</h2>")
        for row in (r for r in data.rows if r.scenario == scenario and not r.is_baseline):
            figure = ""
            if drawn < MAX_FIGURES and scenario in base:
                title = f"{scenario}: {row.arm} against {base[scenario].arm}"
                svg = arm_figure(
                    _series(base[scenario]), _series(row), data.floors.get(scenario), title
                )
                figure = f'<div class="plot">{svg}</div>'
                drawn += 1
            parts.append(_challenger(row, figure))
    left = sum(not r.is_baseline for r in data.rows) - drawn
    if left > 0:
        parts.append(f"<p>{left} further rows are not drawn (see verdicts.jsonl).</p>")
    return "\n".join(parts)


def _challenger(row: VerdictRecord, figure: str) -> str:
    """One challenger: its figure, claim, what it changed to, facets, manifests, cost, stop."""
    bits = [f'<p class="claim">{escape(row.claim)}</p>', _reasons(row.reasons, row.standing)]
    if row.changed_to:
        items = "".join(
            f"<li><code>{escape(c.output)}</code> — {c.count} run(s), seeds "
            f"{escape(', '.join(map(str, c.seeds)))}</li>"
            for c in row.changed_to
        )
        bits.append(f"<p>Changed the answer to:</p><ul>{items}</ul>")
    if row.facets_diff:
        cells = "".join(
            f"<tr><td><code>{escape(k)}</code></td><td>{escape(repr(v[0]))}</td>"
            f"<td>{escape(repr(v[1]))}</td></tr>"
            for k, v in row.facets_diff.items()
        )
        bits.append(f"<table><tr><th>facet</th><th>baseline</th><th>arm</th></tr>{cells}</table>")
    bits += _manifest_and_cost(row)
    if row.sequential is not None:
        q = row.sequential
        bits.append(
            f"<p>Sequential: stopped for <b>{escape(q.stopped_for)}</b> at {q.seeds_used} of "
            f"up to {q.max_samples} seeds (e-value {q.e_value:.3g}, threshold "
            f"{q.threshold:.3g}).</p>"
        )
    return (
        f'<figure class="arm" data-scenario="{escape(row.scenario)}" data-arm="{escape(row.arm)}">'
        f"<figcaption><b>{escape(row.arm)}</b>: {escape(str(row.verdict))}</figcaption>"
        f"{figure}{''.join(bits)}</figure>"
    )


def _manifest_and_cost(row: VerdictRecord) -> list[str]:
    bits = []
    app = row.application
    if app.checked and app.mismatches:
        items = "".join(
            f"<li><code>{escape(str(m.get('facet')))}</code>: declared "
            f"{escape(repr(m.get('declared')))}, reported "
            f"{escape(repr(m['observed'])) if 'observed' in m else 'nothing'}</li>"
            for m in app.mismatches[:10]
        )
        count = app.manifests_mismatched if app.manifests_mismatched is not None else "?"
        bits.append(
            f"<p>Manifest mismatches ({count} of {app.manifests_seen} manifests):</p>"
            f"<ul>{items}</ul>"
        )
    if row.cost:
        cells = ", ".join(f"{escape(k)} median {c.median:g}" for k, c in row.cost.items())
        klass = f"; cost class <b>{escape(row.cost_class)}</b>" if row.cost_class else ""
        bits.append(f"<p>Cost: {cells}{klass}.</p>")
    return bits


def _bisection(rec: BisectRecord) -> str:
    bars = [
        ProbeBar(
            "{" + ", ".join(p.ablated) + "}" if p.ablated else "baseline",
            p.flips,
            p.samples,
            p.flipped,
            p.cached,
            p.speculative,
        )
        for p in rec.probes
    ]
    rows = "".join(
        f"<tr><td>{i}</td><td>{escape(b.label)}</td><td>{b.flips}/{b.samples}</td>"
        f"<td>{'yes' if b.flipped else 'no'}</td><td>{'yes' if b.cached else ''}</td>"
        f"<td>{'yes' if b.speculative else ''}</td></tr>"
        for i, b in enumerate(bars, 1)
    )
    culprits = "".join(f"<li>{escape(', '.join(c))}</li>" for c in rec.culprits) or "<li>none</li>"
    return (
        f"<h2>Bisection: {escape(rec.verdict)} ({escape(rec.reason)})</h2>"
        f'<p class="claim">{escape(rec.claim)}</p>{_reasons(rec.reasons, rec.standing)}'
        f"<h3>Culprit sets</h3><ul>{culprits}</ul>"
        f'<h3>Probes, in order</h3><div class="plot">{probes_figure(bars) if bars else ""}</div>'
        "<table><tr><th>#</th><th>ablated</th><th>flips</th><th>flipped</th><th>cached</th>"
        f"<th>speculative</th></tr>{rows}</table>"
    )


def _failures(data: ReportData) -> str:
    if not data.failed_total:
        return ""
    rows = "".join(
        f"<tr><td>{escape(f.scenario)}</td><td>{escape(f.arm)}</td><td>{f.seed}</td>"
        f"<td><code>{escape(f.error)}</code></td></tr>"
        for f in data.failed
    )
    more = data.failed_total - len(data.failed)
    note = f"<p>and {more} more (see runs.jsonl).</p>" if more > 0 else ""
    return (
        f"<h2>Failed runs ({data.failed_total})</h2><table><tr><th>scenario</th><th>arm</th>"
        f"<th>seed</th><th>error</th></tr>{rows}</table>{note}"
    )
