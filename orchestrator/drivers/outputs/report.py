"""``report.html`` in a run directory: built from its records alone, written atomically.

Written at the end of every ``counterfact run`` and ``counterfact bisect`` (unless
``--no-report``) and rebuilt by ``counterfact report RUN_DIR``.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from counterfact.orchestrator.storage.atomic import write_atomic, write_json, writing
from counterfact.orchestrator.storage.recordfiles import (
    bisect_of,
    blame_of,
    briefs_of,
    require_records,
    summary_of,
    verdicts_of,
)
from counterfact.records.paths import RunPaths
from counterfact.records.runlines import RunBrief
from counterfact.records.summary import SweepSummary
from counterfact.verdicts.report.data import FailedRun, Output, ReportData
from counterfact.verdicts.report.detail import is_compact, sectioned
from counterfact.verdicts.report.html import render

FAILED_LISTED = 50
"""Failed runs listed on the page (all are counted)."""
OUTPUTS_SHOWN = 3
"""Most common outputs shown per (scenario, arm)."""
OUTPUTS_TRACKED = 50
"""Distinct outputs counted per (scenario, arm); rarer ones beyond are not (bounded memory)."""
OUTPUT_CHARS = 300
"""Characters of an output shown."""
SEEDS_PER_OUTPUT = 12
MANIFEST_KEYS = 20
"""Manifest keys tracked per (scenario, arm)."""
ANSWER_LEVEL = frozenset({"numeric", "contains", "regex", "one-of", "custom", "judge"})
"""Comparator kinds that judge the answer, not the text: their flips do not rest on similarity
(the kinds whose comparators say ``answer_level``; a test pins the two together)."""


class _Counted:
    """Distinct texts with the seeds that gave each, the most common first. Texts are told apart
    by a digest of the whole text and shown cut to ``OUTPUT_CHARS`` (with an ellipsis); at most
    ``OUTPUTS_TRACKED`` distinct texts are counted (bounded memory).
    """

    def __init__(self) -> None:
        self.seeds: dict[str, list[int]] = {}
        self.shown: dict[str, str] = {}

    def add(self, text: str, seed: int) -> None:
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
        if key not in self.seeds:
            if len(self.seeds) >= OUTPUTS_TRACKED:
                return
            cut = len(text) > OUTPUT_CHARS
            self.shown[key] = text[:OUTPUT_CHARS] + ("…" if cut else "")
        self.seeds.setdefault(key, []).append(seed)

    def top(self) -> list[Output]:
        ranked = sorted(self.seeds.items(), key=lambda kv: (-len(kv[1]), self.shown[kv[0]]))
        return [
            Output(self.shown[key], len(seeds), tuple(sorted(seeds)[:SEEDS_PER_OUTPUT]), key)
            for key, seeds in ranked[:OUTPUTS_SHOWN]
        ]


class _Outputs:
    """The most common outputs of each (scenario, arm), counted as the runs stream by."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str], _Counted] = {}

    def add(self, record: RunBrief) -> None:
        if record.output is not None:
            self.seen.setdefault((record.scenario, record.arm), _Counted()).add(
                record.output, record.seed
            )

    def top(self) -> dict[tuple[str, str], list[Output]]:
        return {key: counted.top() for key, counted in self.seen.items()}


class _Manifests:
    """The most common values of each manifest key per (scenario, arm), counted as the runs
    stream by (each value as compact JSON; at most ``MANIFEST_KEYS`` keys, and where more were
    reported the (scenario, arm) is marked partial, so an untracked key is not read as absent).
    """

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str], dict[str, _Counted]] = {}
        self.partial: set[tuple[str, str]] = set()

    def add(self, record: RunBrief) -> None:
        if not record.manifest:
            return
        where = (record.scenario, record.arm)
        keys = self.seen.setdefault(where, {})
        for key, value in record.manifest.items():
            if key not in keys and len(keys) >= MANIFEST_KEYS:
                self.partial.add(where)
                continue
            text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
            keys.setdefault(key, _Counted()).add(text, record.seed)

    def top(self) -> dict[tuple[str, str], dict[str, list[Output]]]:
        return {
            where: {key: counted.top() for key, counted in keys.items()}
            for where, keys in self.seen.items()
        }


def _inputs(run_dir: Path) -> dict[str, Any]:
    """Each scenario's inputs, as ``sweep.json`` records them (empty when unreadable)."""
    try:
        meaning = json.loads(RunPaths(run_dir).fingerprint.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    scenarios = meaning.get("scenarios") if isinstance(meaning, dict) else None
    return scenarios if isinstance(scenarios, dict) else {}


def _similarity_shown(summary: SweepSummary | None) -> bool:
    """Whether the figures draw similarity: a measure was configured, or some question is
    judged by a text-level check (its own ``expect``, else the sweep's comparator).
    """
    if summary is None:
        return True
    config = summary.config
    if (config.get("similarity") or {}).get("kind") not in (None, "text"):
        return True
    default = (config.get("comparator") or {}).get("kind")
    questions = config.get("scenarios") or [{}]
    kinds = {
        ((q.get("expect") or {}).get("kind") or default) if isinstance(q, dict) else default
        for q in questions
    }
    return not kinds <= ANSWER_LEVEL


def report_data(run_dir: Path) -> ReportData:
    """What the page shows, read from ``run_dir``'s records.

    Raises:
        RunDirectoryError: no records there, or a record file is damaged.
    """
    require_records(run_dir)
    summary, bisect = summary_of(run_dir), bisect_of(run_dir)
    rows = verdicts_of(run_dir)
    # A large eval set's page has sections for its notable questions only: count their outputs.
    shown = set(sectioned(rows, summary.arms if summary else [])) if is_compact(rows) else None
    failed: list[FailedRun] = []
    total = recorded = 0
    outputs, manifests = _Outputs(), _Manifests()
    for record in briefs_of(run_dir):
        recorded += 1
        if shown is None or record.scenario in shown:
            outputs.add(record)
            manifests.add(record)
        if record.error is None:
            continue
        total += 1
        if len(failed) < FAILED_LISTED:
            error = f"{record.error.type}: {record.error.message}"[:300]
            failed.append(FailedRun(record.scenario, record.arm, record.seed, error))
    name = summary.name if summary else bisect.name if bisect else run_dir.name
    kind = "bisection" if bisect is not None and summary is None else "sweep"
    floors = {}
    for sc in summary.scenarios if summary else []:
        if sc.null_band is not None:
            floors[sc.id] = sc.null_band.floor
    return ReportData(
        title=f"counterfact {kind}: {name}",
        summary=summary,
        rows=rows,
        failed=failed,
        failed_total=total,
        runs_recorded=recorded,
        bisect=bisect,
        blame=blame_of(run_dir) if bisect is not None else None,
        floors=floors,
        inputs=_inputs(run_dir),
        outputs=outputs.top(),
        manifests=manifests.top(),
        manifests_partial=frozenset(manifests.partial),
        similarity_shown=_similarity_shown(summary),
    )


def write_report(run_dir: Path) -> Path:
    """Build ``report.html`` from ``run_dir``'s records and write it atomically; its path.

    Raises:
        RunDirectoryError: no records there, or a record file is damaged.
        RecordWriteError: the file cannot be written (no space left, read-only).
    """
    began = time.perf_counter()
    path = RunPaths(run_dir).report
    text = render(report_data(run_dir))
    with writing(path):
        write_atomic(path, text)
    _record_report_seconds(run_dir, time.perf_counter() - began)
    return path


def _record_report_seconds(run_dir: Path, seconds: float) -> None:
    """Write ``summary.json`` again with ``execution.timings.report_s`` (the report is drawn
    from the summary, so its seconds are known only after it). A summary without them (an older
    version's, its counts at the top level) is left as it was written.
    """
    path = RunPaths(run_dir).summary
    if not path.is_file():
        return  # a bisection's directory
    data = json.loads(path.read_text("utf-8"))
    ran = data.get("execution")
    timings = ran.get("timings") if isinstance(ran, dict) else None
    if not isinstance(timings, dict):
        return
    timings["report_s"] = round(seconds, 4)
    summary = SweepSummary.model_validate(data)
    write_json(path, summary.model_dump(mode="json", by_alias=True))
