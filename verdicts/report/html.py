"""``report.html``: one self-contained page built from a run directory's records.

Pure: records in, HTML text out (the orchestrator reads the files and writes the page). Nothing
is loaded from the network — styles are inline, figures are inline SVG (see
:mod:`counterfact.verdicts.report.plots`), and the one script, for a large eval set's table, is
inline too — so the page opens offline and prints. After the header (with the spend), the verdict
per challenger over the whole question set and its forest plot
(:mod:`~counterfact.verdicts.report.arms`); then, for a small sweep, the verdicts at a glance
(:mod:`~counterfact.verdicts.report.glance`), the tables and a section per scenario
(:mod:`~counterfact.verdicts.report.scenario`) with one figure for all of its arms; for a large
one, every row in one filtered, paged table and sections only for the questions that moved most
(:mod:`~counterfact.verdicts.report.detail`). Every row is on the page either way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape

from counterfact.records.arms import ArmVerdictRecord
from counterfact.records.bisect import BisectProbeRecord, BisectRecord
from counterfact.records.summary import SweepSummary, took_text
from counterfact.records.verdicts import VerdictRecord
from counterfact.verdicts.report.arms import arms_section, spend_text
from counterfact.verdicts.report.call import call_section
from counterfact.verdicts.report.data import Output, ReportData
from counterfact.verdicts.report.detail import detail_table, is_compact, sectioned
from counterfact.verdicts.report.glance import GLANCE_STYLE, forest, matrix, pooled_table
from counterfact.verdicts.report.plots import ProbeBar, probes_figure
from counterfact.verdicts.report.scenario import reasons_html, scenario_sections
from counterfact.verdicts.standing import standing_cell

OutputsByArm = Mapping[tuple[str, str], Sequence[Output]]
"""Each (scenario, arm)'s most common outputs."""

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


def render(data: ReportData) -> str:
    """The whole page."""
    parts = [f"<h1>{escape(data.title)}</h1>", _header(data)]
    arms = data.summary.arms if data.summary is not None else []
    parts.append(arms_section(arms))
    if data.rows:
        parts += _small(data, arms) if not is_compact(data.rows) else _large(data, arms)
    if data.blame is not None:
        parts.append(call_section(data.blame))
    if data.bisect is not None:
        parts.append(_bisection(data.bisect, data.outputs))
    parts.append(_failures(data))
    body = "\n".join(p for p in parts if p)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(data.title)}</title><style>{STYLE}{GLANCE_STYLE}</style></head>"
        f"<body>\n{body}\n</body></html>\n"
    )


def _small(data: ReportData, arms: Sequence[ArmVerdictRecord]) -> list[str]:
    """Up to a few dozen questions: the scenario x challenger matrix, the tables, and a section
    with a figure per scenario (the pooled forest plot only where the arm-level one is missing).
    """
    return [
        matrix(data),
        "" if arms else forest(data),
        pooled_table(data),
        _verdict_table(data.rows),
        _rollup(data),
        scenario_sections(data),
    ]


def _large(data: ReportData, arms: Sequence[ArmVerdictRecord]) -> list[str]:
    """A large eval set: the pooled tests, the roll-up, every row in one compact table, and
    sections only for the questions that moved most (a figure each).
    """
    notable = sectioned(data.rows, arms)
    if notable:
        links = ", ".join(f'<a href="#scenario-{escape(q)}">{escape(q)}</a>' for q in notable)
        head = (
            f'<h2 id="notable">The questions that moved most ({len(notable)})</h2>'
            f"<p>Each challenger's most-moved questions in turn: {links}. Every question's row "
            "is in the table above.</p>"
        )
    else:
        head = ""
    return [
        "" if arms else forest(data),
        pooled_table(data),
        _rollup(data),
        detail_table(data.rows),
        head,
        scenario_sections(data, notable),
    ]


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
        ("status", record.execution.status),
        ("spend", None if data.summary is None else spend_text(record.execution.spend)),
        ("config", record.config_source or "(Python API)"),
        ("overrides", " ".join(record.overrides) or None),
        ("counterfact", record.counterfact_version),
        ("Python", record.python_version),
        ("Ray", record.ray_version),
        ("started", record.started_at),
        ("finished", record.finished_at),
        ("took", None if data.summary is None else took_text(data.summary)),
        ("runs", _runs_text(record, data)),
        ("failure", record.execution.failure),
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
            ("runs failed", s.execution.runs_failed),
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


def _runs_text(record: SweepSummary | BisectRecord, data: ReportData) -> str:
    """``32 recorded: 0 run by the last command, 32 read back (resume)``: what the directory
    holds, then where its runs came from (a resume's last command may have run none).
    """
    ran = record.execution
    cached = ran.runs_from_cache
    parts = [f"{ran.runs_used:,} run by the last command"]
    if ran.runs_reused:
        parts.append(f"{ran.runs_reused:,} read back (resume)")
    if cached:
        parts.append(f"{cached:,} from the cache")
    held = f"{data.runs_recorded:,} recorded: " if data.runs_recorded is not None else ""
    return held + ", ".join(parts)


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
        "<th>standing</th><th>check</th></tr>"
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
            f'<td class="{escape(r.standing)}">{escape(standing_cell(r))}</td>'
            f'<td class="check">{escape(r.check or "")}</td></tr>'
        )
    return '<h2>Verdicts</h2><table class="verdicts">' + "".join(lines) + "</table>"


def _rollup(data: ReportData) -> str:
    if data.summary is None or not data.summary.rollup:
        return ""
    items = "".join(f"<li>{escape(r.summary)}</li>" for r in data.summary.rollup)
    return f"<h2>Each arm across scenarios</h2><ul>{items}</ul>"


def _probe_output(p: BisectProbeRecord, scenario: str, outputs: OutputsByArm) -> str:
    """The probe's most common output and how many of its runs gave it."""
    if p.ablated:
        found = outputs.get(
            (scenario, "ablate:" + json.dumps(sorted(p.ablated), separators=(",", ":")))
        )
    else:
        found = next(
            (
                v
                for (sc, arm), v in outputs.items()
                if sc == scenario and not arm.startswith("ablate:")
            ),
            None,
        )
    if not found:
        return ""
    top = found[0]
    return f"<code>{escape(top.text[:80])}</code> ({top.count})"


def _probe_row(i: int, p: BisectProbeRecord, tested: bool, output: str) -> str:
    label = _probe_label(p)
    test = ""
    if tested:
        pv = "" if p.p_value is None else f"{p.p_value:.3g}"
        pairs = "" if p.n10 is None else f"{p.n10} vs {p.n01}"
        test = f"<td>{pairs}</td><td>{pv}</td>"
    return (
        f"<tr><td>{i}</td><td>{escape(label)}</td><td>{p.flips}/{p.samples}</td>{test}"
        f"<td>{'yes' if p.flipped else 'no'}</td><td>{'yes' if p.cached else ''}</td>"
        f"<td>{'yes' if p.speculative else ''}</td><td>{output}</td></tr>"
    )


def _probe_label(p: BisectProbeRecord) -> str:
    return "{" + ", ".join(p.ablated) + "}" if p.ablated else "baseline"


def _confirmations(rec: BisectRecord) -> str:
    """``decide: test``: each set re-run on fresh seeds, the probe that confirmed it (or not)."""
    if not rec.confirmations:
        return ""
    rows = "".join(
        f"<tr><td>{escape(', '.join(c.culprit))}</td><td>{c.first_seed}..."
        f"{c.first_seed + rec.samples - 1}</td><td>{c.n10} vs {c.n01}</td>"
        f"<td>{c.p_value:.3g}</td><td>{c.alpha:.3g}</td><td>{'yes' if c.confirmed else 'no'}"
        "</td></tr>"
        for c in rec.confirmations
    )
    return (
        "<h3>Confirmation on fresh seeds</h3><table><tr><th>set</th><th>seeds</th>"
        "<th>discordant</th><th>p</th><th>level</th><th>held</th></tr>" + rows + "</table>"
    )


def _bisection(rec: BisectRecord, outputs: OutputsByArm) -> str:
    bars = [
        ProbeBar(
            _probe_label(p),
            p.flips,
            p.samples,
            p.flipped,
            p.cached,
            p.speculative,
        )
        for p in rec.probes
    ]
    tested = rec.decide == "test"
    head = "<th>discordant</th><th>p (vs baseline)</th>" if tested else ""
    rows = "".join(
        _probe_row(i, p, tested, _probe_output(p, rec.scenario, outputs))
        for i, p in enumerate(rec.probes, 1)
    )
    culprits = "".join(f"<li>{escape(', '.join(c))}</li>" for c in rec.culprits) or "<li>none</li>"
    return (
        f"<h2>Bisection: {escape(rec.verdict)} ({escape(rec.reason)})</h2>"
        f'<p class="claim">{escape(rec.claim)}</p>{reasons_html(rec.reasons, rec.standing)}'
        f"<h3>Culprit sets</h3><ul>{culprits}</ul>{_confirmations(rec)}"
        f'<h3>Probes, in order</h3><div class="plot">{probes_figure(bars) if bars else ""}</div>'
        f"<table><tr><th>#</th><th>ablated</th><th>flips</th>{head}<th>flipped</th>"
        f"<th>cached</th><th>speculative</th><th>most common output</th></tr>{rows}</table>"
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
