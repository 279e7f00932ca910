"""One question of one arm: the baseline's and the arm's outputs side by side, seed by seed,
with each run's error, manifest and — when the runner recorded chat messages in its manifest
(``messages`` or ``transcript``: a list of ``{"role", "content"}``) — its transcript.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from counterfact.orchestrator.view.files import Unreadable
from counterfact.orchestrator.view.html import esc, link, page, pager, table, text_block
from counterfact.orchestrator.view.rundir import RunView, indexing
from counterfact.records.runs import RunRecord

SEEDS_PER_PAGE = 20
OUTPUT_CHARS = 10_000
"""Characters of an output shown on the page (the whole one is a link away)."""
MANIFEST_CHARS = 4_000
MESSAGES_SHOWN = 200
TRANSCRIPT_CHARS = 10_000
"""Characters of a run's transcript shown, over all its messages."""
TRANSCRIPT_KEYS = ("messages", "transcript")


def pick_baseline(run: RunView, scenario: str, asked: str) -> tuple[str | None, bool]:
    """The arm to show beside: the one asked, the records' baseline, else a guess (True)."""
    arms = run.runs.arms
    if asked and asked in arms:
        return asked, False
    found = run.baseline_of(scenario)
    if found is not None:
        return found, False
    if "baseline" in arms:
        return "baseline", True
    return next(iter(arms), None), True


def transcript(manifest: Mapping[str, Any] | None) -> list[tuple[str, str]] | None:
    """(role, content) of each chat message the manifest holds, or None when it holds none."""
    if not manifest:
        return None
    for key in TRANSCRIPT_KEYS:
        found = manifest.get(key)
        if isinstance(found, list) and found and all(isinstance(m, dict) for m in found):
            return [
                (
                    str(m.get("role", "?")),
                    c if isinstance(c := m.get("content", ""), str) else json.dumps(c),
                )
                for m in found
            ]
    return None


def _transcript_html(messages: list[tuple[str, str]]) -> str:
    items = []
    left = TRANSCRIPT_CHARS
    for role, content in messages[:MESSAGES_SHOWN]:
        if left <= 0:
            break
        items.append(f"<dt>{esc(role)}</dt><dd>{text_block(content, min(left, OUTPUT_CHARS))}</dd>")
        left -= min(len(content), OUTPUT_CHARS)
    more = len(messages) - len(items)
    tail = f"<p>… {more:,} more messages</p>" if more > 0 else ""
    return (
        f"<details open><summary>transcript ({len(messages):,} messages)</summary>"
        f'<dl class="live">{"".join(items)}</dl>{tail}</details>'
    )


def _cell(run: RunView, record: RunRecord | None, flipped: bool) -> str:
    if record is None:
        return '<span class="muted">not run (yet)</span>'
    parts = []
    if flipped:
        parts.append('<strong class="confirmed">flipped</strong>')
    if record.output is not None:
        parts.append(text_block(record.output, OUTPUT_CHARS))
        more = len(record.output) - OUTPUT_CHARS
        if more > 0:
            where = {"run": run.id, "arm": record.arm, "q": record.scenario, "seed": record.seed}
            whole = link("/output", "the whole output", **where)
            parts.append(f"<p>… {more:,} more characters: {whole}</p>")
    if record.error is not None:
        parts.append(f"<p><strong>{esc(record.error.type)}</strong></p>")
        parts.append(text_block(record.error.message, MANIFEST_CHARS))
        if record.error.traceback:
            trace = text_block(record.error.traceback, MANIFEST_CHARS)
            parts.append(f"<details><summary>traceback</summary>{trace}</details>")
    messages = transcript(record.manifest)
    if messages is not None:
        parts.append(_transcript_html(messages))
    if record.manifest:
        shown = json.dumps(record.manifest, ensure_ascii=False, default=str, indent=1)
        parts.append(
            f"<details><summary>manifest</summary>{text_block(shown, MANIFEST_CHARS)}</details>"
        )
    return "".join(parts)


def run_record(run: RunView, arm: str, scenario: str, seed: int) -> RunRecord | None:
    """The record of one run, or None when there is none (or its line is damaged)."""
    found = run.runs.run(arm, scenario, seed)
    if found is None:
        return None
    try:
        return run.runs.record(found[0])
    except ValueError:  # pydantic's ValidationError among them
        return None


def _claim(run: RunView, arm: str, scenario: str) -> tuple[str, set[int]]:
    row = run.verdicts.rows.get((scenario, arm))
    if row is None:
        return "", set()
    record = run.verdicts.record(row)
    claim = f'<p class="claim">{esc(record.claim)}</p>'
    summary = run.summary()
    scenario_summary = None
    if summary is not None:
        scenario_summary = next((s for s in summary.scenarios if s.id == scenario), None)
    if scenario_summary is not None and scenario_summary.reference.text is not None:
        claim += "<p>Reference:</p>" + text_block(scenario_summary.reference.text, OUTPUT_CHARS)
    return claim, set(record.flipped_seed_list() or [])


def question_page(run: RunView, arm: str, scenario: str, asked: str, number: int) -> str | None:
    """The side-by-side page; None when the arm has no runs or verdict on the question."""
    crumbs = [
        link("/sweep", run.id, run=run.id),
        link("/arm", arm, run=run.id, arm=arm),
        link("/question", scenario, run=run.id, arm=arm, q=scenario),
    ]
    try:
        run.indexed()
        if not run.runs.seeds(arm, scenario) and (scenario, arm) not in run.verdicts.rows:
            return None
        base, guessed = pick_baseline(run, scenario, asked)
        claim, flipped = _claim(run, arm, scenario)
        body = claim + _side_by_side(run, arm, scenario, base, guessed, flipped, number)
    except Unreadable as exc:
        return page(scenario, f"<p>unreadable: {esc(exc)}</p>", crumbs=crumbs)
    return page(f"{scenario} · {arm}", indexing(run) + body, crumbs=crumbs)


def _side_by_side(
    run: RunView,
    arm: str,
    scenario: str,
    base: str | None,
    guessed: bool,
    flipped: set[int],
    number: int,
) -> str:
    alone = base is None or base == arm
    seeds = sorted(set(run.runs.seeds(arm, scenario)) | set(run.runs.seeds(base or arm, scenario)))
    shown = seeds[(number - 1) * SEEDS_PER_PAGE : number * SEEDS_PER_PAGE]
    rows = []
    for seed in shown:
        mine = _cell(run, run_record(run, arm, scenario, seed), seed in flipped)
        cells = [esc(seed)]
        if not alone and base is not None:
            cells.append(_cell(run, run_record(run, base, scenario, seed), False))
        rows.append([*cells, mine])
    note = ""
    if guessed and not alone:
        note = f'<p class="note">Baseline assumed to be {esc(base)} (no verdicts yet).</p>'
    headers = ("seed", arm) if alone else ("seed", f"baseline: {base}", arm)
    params: dict[str, object] = {"run": run.id, "arm": arm, "q": scenario, "base": base}
    return (
        note
        + pager(len(seeds), number, SEEDS_PER_PAGE, "/question", **params)
        + table(headers, rows, "side")
    )
