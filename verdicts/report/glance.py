"""The top of ``report.html``: the verdicts at a glance — a scenario x challenger matrix, the
pooled result per challenger as a forest plot, and the pooled tests' table.
"""

from __future__ import annotations

from html import escape

from counterfact.records.verdicts import VerdictRecord
from counterfact.verdicts.report.data import ReportData
from counterfact.verdicts.report.plots import effects_of, forest_figure

GLANCE_STYLE = """
table.matrix td{text-align:center;min-width:6em}table.matrix td.sc{text-align:left}
.cell-up{background:#f8d7da}.cell-down{background:#d4edda}.cell-none{background:#f4f4f4}
.cell-unsure{background:#fff3cd}.cell small{display:block;color:#555}
"""


def _cell_class(row: VerdictRecord) -> str:
    """By direction and significance: a break red, a fix green, nothing grey, no answer amber."""
    if row.verdict == "inconclusive":
        return "cell-unsure"
    if row.verdict != "confirmed":
        return "cell-none"
    diff = row.effect.diff if row.effect is not None else 1.0
    return "cell-down" if diff < 0 else "cell-up"


def _cell(row: VerdictRecord | None) -> str:
    if row is None:
        return "<td></td>"
    effect = f"{row.effect.diff:+.2f}" if row.effect is not None else ""
    stat = row.statistical_verdict or (row.statistical_verdict_withheld and "withheld") or ""
    title = escape(f"{row.reason}; {stat}; {row.standing}")
    return (
        f'<td class="cell {_cell_class(row)}" title="{title}">{escape(str(row.verdict))}'
        f"<small>{escape(effect)} {escape(stat)}</small></td>"
    )


def matrix(data: ReportData) -> str:
    """Rows scenarios, columns challengers; each cell the headline verdict with its effect."""
    challengers = list(dict.fromkeys(r.arm for r in data.rows if not r.is_baseline))
    if not challengers:
        return ""
    by = {(r.scenario, r.arm): r for r in data.rows}
    scenarios = list(dict.fromkeys(r.scenario for r in data.rows))
    head = "".join(f"<th>{escape(a)}</th>" for a in challengers)
    body = "".join(
        f'<tr><td class="sc">{escape(sc)}</td>'
        + "".join(_cell(by.get((sc, a))) for a in challengers)
        + "</tr>"
        for sc in scenarios
    )
    return (
        "<h2>Verdicts at a glance</h2><p>Each cell: the headline verdict, the flip-rate "
        "difference (arm minus baseline) and the test; red a confirmed break, green a confirmed "
        "fix, amber inconclusive, grey not confirmed.</p>"
        f'<table class="matrix"><tr><th>scenario</th>{head}</tr>{body}</table>'
    )


def forest(data: ReportData) -> str:
    """The pooled effect per challenger with its clustered interval, drawn."""
    pooled = data.summary.pooled if data.summary is not None else []
    effects = effects_of(pooled)
    if not effects:
        return ""
    return f'<figure class="forest"><div class="plot">{forest_figure(effects)}</div></figure>'


def pooled_table(data: ReportData) -> str:
    """Each challenger's pooled test and effect: often the one result that survives the
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
            f'<td class="{escape(r.secondary_reading)}">{escape(r.secondary_reading)}</td>'
            f"<td>{r.n10} vs {r.n01} of {r.pairs}</td><td>{r.p_value:.3g}</td>"
            f"<td>{r.p_adjusted:.3g}</td><td>{effect}</td><td>{escape(agree)}</td></tr>"
        )
    method = escape(data.summary.pooled[0].method)
    return (
        f"<h2>Pooled across scenarios</h2><p>{method}, adjusted over the challengers.</p>"
        f'<table class="pooled">{"".join(lines)}</table>'
    )
