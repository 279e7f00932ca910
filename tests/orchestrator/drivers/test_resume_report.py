"""What a resume says about itself: report.html's header counts the runs the directory holds
(it said "runs used 0" after a resume), and ``bisect`` prints the command's own wall time (it
printed the search's, "wall time 0.0 s", for a resume that took 15 s).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from datetime import datetime
from html.parser import HTMLParser
from pathlib import Path

import httpx
import pytest

from ...conftest import TESTS, write_config
from ...gate_sweeps import write_gate_sweep
from ...helpers import invoke
from ...viewsweeps import Viewer


class _Meta(HTMLParser):
    """The report header's ``<dl class="meta">`` as ``{dt: dd}``."""

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[str, str] = {}
        self._tag: str | None = None
        self._key = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._tag = tag

    def handle_data(self, data: str) -> None:
        if self._tag == "dt":
            self._key = data
        elif self._tag == "dd" and self._key:
            self.items.setdefault(self._key, data)

    def handle_endtag(self, tag: str) -> None:
        self._tag = None


def _header(run_dir: Path) -> dict[str, str]:
    meta = _Meta()
    meta.feed((run_dir / "report.html").read_text(encoding="utf-8"))
    return meta.items


def test_a_resumed_sweep_s_report_counts_every_run_it_holds(tmp_path: Path) -> None:
    cfg, out = write_gate_sweep(tmp_path), tmp_path / "o"  # 3 arms x 4 seeds
    assert invoke("run", str(cfg), "--out", str(out))[0] == 0
    assert _header(out)["runs"] == "12 recorded: 12 run by the last command"
    code, _, err = invoke("run", str(cfg), "--out", str(out))
    assert code == 0 and "resumed: 12 runs read back, 0 from the cache, 0 run now" in err
    assert _header(out)["runs"] == "12 recorded: 0 run by the last command, 12 read back (resume)"
    # raising samples on resume: the old runs read back, the new seeds run
    code, _, err = invoke("run", str(cfg), "--out", str(out), "--set", "samples=6")
    assert code == 0, err
    assert _header(out)["runs"] == "18 recorded: 6 run by the last command, 12 read back (resume)"
    cache = tmp_path / "cache"
    for where in ("a", "b"):
        args = ("run", str(cfg), "--out", str(tmp_path / where), "--cache", str(cache))
        assert invoke(*args)[0] == 0
    assert (
        _header(tmp_path / "b")["runs"]
        == "12 recorded: 0 run by the last command, 12 from the cache"
    )


SLOW_IMPORT = """\
import time

time.sleep(0.6)  # a slow import: time the command spends outside the search


def run(ctx):
    return "right" if "x" in ctx.arm.ablations else "wrong"
"""


def _bisect(cfg: Path, out: Path) -> tuple[str, float]:
    """``counterfact bisect`` in a process of its own (the runner is imported afresh): its
    stdout and how long it took, measured from outside.
    """
    began = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "counterfact.orchestrator.cli",
            "bisect",
            str(cfg),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(TESTS.parent)},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, time.perf_counter() - began


def test_a_resumed_bisection_prints_the_command_s_wall_time(tmp_path: Path) -> None:
    (tmp_path / "slow.py").write_text(SLOW_IMPORT)
    cfg = write_config(
        tmp_path,
        "name: b\nrunner: slow.py:run\nreference: wrong\ncomparator: exact\nexecutor: local\n"
        "bisect: {suspects: [p, x, q], max_probes: 8}\n",
    )
    out = tmp_path / "b"
    first, _ = _bisect(cfg, out)
    used = re.search(r"runs: (\d+) run now; wall time ([\d.]+) s \(the search ([\d.]+) s\)", first)
    assert used is not None, first
    stdout, outside = _bisect(cfg, out)
    line = re.search(
        r"runs: 0 run now, (\d+) read back \(resume\); wall time ([\d.]+) s \(the search "
        r"([\d.]+) s\)",
        stdout,
    )
    assert line is not None, stdout
    assert line.group(1) == used.group(1)  # every run of the first search, read back
    wall, search = float(line.group(2)), float(line.group(3))
    assert search < 0.6 <= wall <= outside  # the import's 0.6 s is the command's, not the search's
    assert (out / "report.html").is_file()
    assert (
        _header(out)["runs"]
        == f"{used.group(1)} recorded: 0 run by the last command, {used.group(1)} read back (resume)"
    )


def test_a_resumed_sweep_keeps_its_first_start_and_adds_up_its_time(tmp_path: Path) -> None:
    # issue 39 item 7: summary.json, the report and the viewer showed the last resume's start
    # and finish, so a 27-minute sweep over three invocations read as 0.3 s
    cfg, out = write_gate_sweep(tmp_path), tmp_path / "o"
    assert invoke("run", str(cfg), "--out", str(out))[0] == 0
    first = json.loads((out / "summary.json").read_text())
    assert first["invocations"] == 1 and first["invocation_started_at"] == first["started_at"]
    time.sleep(0.3)  # a gap between invocations: not the sweep's own time
    code, _, err = invoke("run", str(cfg), "--out", str(out), "--set", "samples=6")
    assert code == 0, err
    last = json.loads((out / "summary.json").read_text())
    assert last["started_at"] == first["started_at"]  # the sweep's first start, kept
    assert last["invocation_started_at"] > first["finished_at"]  # this invocation's own
    assert last["invocations"] == 2
    mine = _span(last["invocation_started_at"], last["finished_at"])
    assert last["active_s"] == pytest.approx(first["active_s"] + mine, abs=0.002)
    assert last["active_s"] < _span(last["started_at"], last["finished_at"]) - 0.25
    header = _header(out)
    assert header["started"] == first["started_at"]
    assert header["took"] == f"{last['active_s']:,.1f} s over 2 invocations; the last {mine:,.1f} s"
    with Viewer(tmp_path) as viewer:
        page = httpx.get(f"{viewer.url}/sweep", params={"run": "o"}).text
    assert "over 2 invocations" in page and first["started_at"] in page


def _span(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
