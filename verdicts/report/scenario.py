"""``report.html``'s scenario sections: the question, the reference, one figure for every arm,
the baseline's outputs beside what each arm changed them to, and each challenger's claim,
reasons for doubt, manifests, cost and seeds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape

from counterfact.records.parts import DoubtRecord
from counterfact.records.summary import ReferenceRecord
from counterfact.records.verdicts import VerdictRecord
from counterfact.verdicts.report.data import Output, ReportData
from counterfact.verdicts.report.plots import Series, scenario_figure

INPUT_CHARS = 2_000
"""Characters of a scenario's inputs shown (its question)."""


def _series(row: VerdictRecord) -> Series:
    ci = row.flip_rate_ci
    rate = row.flips / row.samples if row.flips is not None and row.samples else None
    return Series(
        row.arm, row.similarities or [], rate, ci.low if ci else None, ci.high if ci else None
    )


def _seed_span(row: VerdictRecord) -> str:
    seeds = row.seed_list()
    if not seeds:
        return "no successful run"
    span = f"{seeds[0]}..{seeds[-1]}" if seeds == list(range(seeds[0], seeds[-1] + 1)) else ""
    text = f"seeds {span} ({len(seeds)})" if span else f"{len(seeds)} seeds"
    # records before version 8 have no missing seeds: their failed seeds include the unrun
    label = "failed" if row.schema_version >= 8 else "failed or missing"
    for name, listed in ((label, row.failed_seed_list()), ("not run", row.missing_seed_list())):
        if listed:
            text += f"; {name}: {', '.join(map(str, listed[:20]))}"
            text += f" and {len(listed) - 20} more" if len(listed) > 20 else ""
    return text


def _outputs(outputs: Sequence[Output]) -> str:
    items = "".join(
        f"<li><code>{escape(o.text)}</code> — {o.count} run(s), seeds "
        f"{escape(', '.join(map(str, o.seeds)))}</li>"
        for o in outputs
    )
    return f"<ul>{items}</ul>" if items else ""


def reasons_html(reasons: Sequence[DoubtRecord], standing: str) -> str:
    """The reasons for doubt, one line each with the seeds that witness it."""
    if not reasons:
        if standing == "sure":
            return "<p>Standing: <b>sure</b> — every check that bears on it ran and passed.</p>"
        return ""
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
            f"<p>Manifests that differed ({count} of {app.manifests_seen} manifests):</p>"
            f"<ul>{items}</ul>"
        )
    if row.cost:
        cells = ", ".join(f"{escape(k)} median {c.median:g}" for k, c in row.cost.items())
        klass = f"; cost class <b>{escape(row.cost_class)}</b>" if row.cost_class else ""
        bits.append(f"<p>Cost: {cells}{klass}.</p>")
    return bits


MANIFEST_KEYS_SHOWN = 10
"""Manifest keys whose values differ between baseline and arm, listed per challenger."""


def manifest_differences(
    base: Mapping[str, Sequence[Output]],
    arm: Mapping[str, Sequence[Output]],
    partial: tuple[bool, bool] = (False, False),
) -> str:
    """The manifest keys whose most common value differs between the baseline's runs and the
    arm's (what the agent actually used: retrieved passages, the model), with the seeds; values
    are compared whole (by digest), not as shown. ``partial``: whether the baseline's or the
    arm's keys were cut at the tracking limit (a key missing there is skipped, not "nothing").
    """
    if not base:
        return "<p>The baseline's runs reported no manifest to compare with.</p>" if arm else ""
    both: list[str] = []
    one_side: list[str] = []
    for key in sorted(set(base) | set(arm)):
        b, a = base.get(key, ()), arm.get(key, ())
        if (not b and partial[0]) or (not a and partial[1]):
            continue
        if b and a and _same(b[0], a[0]):
            continue
        item = (
            f"<li><code>{escape(key)}</code>: the baseline {_reported(b)}; the arm {_reported(a)}"
            "</li>"
        )
        (both if b and a else one_side).append(item)
    items = both + one_side  # values that changed first, then keys only one side reported
    if not items:
        return ""
    more = len(items) - MANIFEST_KEYS_SHOWN
    tail = f"<li>and {more} more key(s)</li>" if more > 0 else ""
    return (
        "<p>What the runs reported that differed (manifests, most common value):</p>"
        f"<ul>{''.join(items[:MANIFEST_KEYS_SHOWN])}{tail}</ul>"
    )


def _same(a: Output, b: Output) -> bool:
    return (a.identity or a.text) == (b.identity or b.text)


def _reported(values: Sequence[Output]) -> str:
    if not values:
        return "reported nothing"
    top = values[0]
    seeds = ", ".join(map(str, top.seeds))
    return f"reported <code>{escape(top.text)}</code> ({top.count} run(s), seeds {escape(seeds)})"


def _challenger(row: VerdictRecord, data: ReportData, base: str | None) -> str:
    """One challenger: claim, reasons, what it changed to, facets, manifests, cost, seeds."""
    bits = [f'<p class="claim">{escape(row.claim)}</p>', reasons_html(row.reasons, row.standing)]
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
    if base is not None:
        bits.append(
            manifest_differences(
                data.manifests.get((row.scenario, base), {}),
                data.manifests.get((row.scenario, row.arm), {}),
                (
                    (row.scenario, base) in data.manifests_partial,
                    (row.scenario, row.arm) in data.manifests_partial,
                ),
            )
        )
    bits += _manifest_and_cost(row)
    used = _seed_span(row)
    if row.sequential is not None:
        q = row.sequential
        used += (
            f"; sequential: stopped for {q.stopped_for} at {q.seeds_used} of up to "
            f"{q.max_samples} (e-value {q.e_value:.3g}, threshold {q.threshold:.3g})"
        )
    bits.append(f"<p>Seeds used: {escape(used)}.</p>")
    return (
        f'<section class="arm" data-scenario="{escape(row.scenario)}" '
        f'data-arm="{escape(row.arm)}"><h3>{escape(row.arm)}: {escape(str(row.verdict))}</h3>'
        f"{''.join(bits)}</section>"
    )


def _question(
    data: ReportData, scenario: str, reference: ReferenceRecord | None, check: str | None
) -> str:
    inputs = data.inputs.get(scenario)
    bits = []
    if inputs:
        text = json.dumps(dict(inputs), ensure_ascii=False, indent=1)[:INPUT_CHARS]
        bits.append(f"<p>Inputs (the question):</p><pre>{escape(text)}</pre>")
    if reference is not None:
        source = "declared" if reference.from_ == "prior-run" else "the baseline's seed 0"
        text = reference.text if reference.text is not None else "(none)"
        bits.append(f"<p>Reference ({source}): <code>{escape(text)}</code></p>")
    if check:
        bits.append(f'<p class="check">Judged by: <code>{escape(check)}</code></p>')
    return "".join(bits)


def scenario_sections(data: ReportData, only: Sequence[str] | None = None) -> str:
    """One section per scenario (or per scenario of ``only``, in that order), every row of it,
    one combined figure each.
    """
    by_scenario: dict[str, list[VerdictRecord]] = {}
    for r in data.rows:
        by_scenario.setdefault(r.scenario, []).append(r)
    references = {s.id: s.reference for s in data.summary.scenarios} if data.summary else {}
    parts: list[str] = []
    for scenario in by_scenario if only is None else only:
        rows = by_scenario.get(scenario, [])
        if not rows:
            continue
        base = next((r for r in rows if r.is_baseline), None)
        ordered = ([base] if base else []) + [r for r in rows if not r.is_baseline]
        svg = scenario_figure(
            [_series(r) for r in ordered],
            data.floors.get(scenario),
            f"scenario {scenario}",
            data.similarity_shown,
        )
        question = _question(data, scenario, references.get(scenario), rows[0].check)
        parts.append(
            f'<h2 id="scenario-{escape(scenario)}">Scenario {escape(scenario)}</h2>{question}'
            f'<figure class="scenario" data-scenario="{escape(scenario)}">'
            f'<div class="plot">{svg}</div></figure>'
        )
        if base is not None:
            shown = _outputs(data.outputs.get((scenario, base.arm), ()))
            parts.append(
                f"<p>The baseline <b>{escape(base.arm)}</b> answered ({escape(_seed_span(base))}):"
                f"</p>{shown}"
            )
        base_arm = base.arm if base is not None else None
        parts.extend(_challenger(r, data, base_arm) for r in rows if not r.is_baseline)
    return "\n".join(parts)
