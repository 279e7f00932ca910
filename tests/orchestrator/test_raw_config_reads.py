"""Resolve once: nothing outside ``orchestrator/config/`` reads a sweep's raw config.

A resolved sweep (:class:`~counterfact.orchestrator.config.resolve.ResolvedSweep`) keeps the
validated ``SweepConfig`` it came from as ``.config``; the budget, seeds, design, executor options
and names are read through its accessors, so a setting is interpreted in one place. Read from the
source with ``ast``: every ``<something>.config`` outside the config package is listed, except the
record files' ``config`` (a ``summary``'s or a ``record``'s: what ``summary.json`` holds), pytest's
``request.config``, and the chat runner's own ``self.config`` (its ``runner:`` section).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
FOLDERS = ("orchestrator", "verdicts", "probes", "records")
ALLOWED_RECEIVERS = {"summary", "self.summary", "record", "request"}
OWN_CONFIG = {"orchestrator/runners/chat.py"}
"""Modules whose ``self.config`` is their own section, not a sweep's."""


def _sources() -> list[Path]:
    found = sorted((ROOT / "counterfact").glob("*.py"))
    for folder in FOLDERS:
        found += sorted((ROOT / folder).rglob("*.py"))
    return [
        p for p in found if not p.relative_to(ROOT).as_posix().startswith("orchestrator/config/")
    ]


def raw_config_reads(paths: list[Path], root: Path = ROOT) -> list[str]:
    """Each ``<receiver>.config`` in ``paths``, as ``path:line receiver.config``."""
    reads = []
    for path in paths:
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Attribute) and node.attr == "config"):
                continue
            receiver = ast.unparse(node.value)
            if receiver in ALLOWED_RECEIVERS or (receiver == "self" and rel in OWN_CONFIG):
                continue
            reads.append(f"{rel}:{node.lineno} {receiver}.config")
    return reads


def test_nothing_outside_config_reads_the_raw_config() -> None:
    # fix: add an accessor to ResolvedSweep (orchestrator/config/resolve.py) and read that
    assert raw_config_reads(_sources()) == []


def test_the_scan_finds_a_raw_read(tmp_path: Path) -> None:
    # the scan itself, so the test above can fail: a read through a resolved sweep is listed,
    # a summary's recorded config is not
    module = tmp_path / "driver.py"
    module.write_text(
        "def f(sweep, summary):\n"
        "    seeds = sweep.config.samples\n"
        "    return seeds, summary.config.get('samples'), sweep.samples\n",
        encoding="utf-8",
    )
    assert raw_config_reads([module], tmp_path) == ["driver.py:2 sweep.config"]
