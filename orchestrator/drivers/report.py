"""``report.html`` in a run directory: built from its records alone, written atomically.

Written at the end of every ``counterfact run`` and ``counterfact bisect`` (unless
``--no-report``) and rebuilt by ``counterfact report RUN_DIR``.
"""

from __future__ import annotations

from pathlib import Path

from counterfact.orchestrator.storage.atomic import write_atomic, writing
from counterfact.orchestrator.storage.dirchecks import REPORT_FILE
from counterfact.orchestrator.storage.recordfiles import (
    read_bisect,
    read_summary,
    read_verdicts,
    require_records,
    runs,
)
from counterfact.verdicts.html import FailedRun, ReportData, render

FAILED_LISTED = 50
"""Failed runs listed on the page (all are counted)."""


def report_data(run_dir: Path) -> ReportData:
    """What the page shows, read from ``run_dir``'s records.

    Raises:
        RunDirectoryError: no records there, or a record file is damaged.
    """
    require_records(run_dir)
    summary, bisect = read_summary(run_dir), read_bisect(run_dir)
    failed: list[FailedRun] = []
    total = 0
    for record in runs(run_dir):
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
        rows=read_verdicts(run_dir),
        failed=failed,
        failed_total=total,
        bisect=bisect,
        floors=floors,
    )


def write_report(run_dir: Path) -> Path:
    """Build ``report.html`` from ``run_dir``'s records and write it atomically; its path.

    Raises:
        RunDirectoryError: no records there, or a record file is damaged.
        RecordWriteError: the file cannot be written (no space left, read-only).
    """
    path = run_dir / REPORT_FILE
    text = render(report_data(run_dir))
    with writing(path):
        write_atomic(path, text)
    return path
