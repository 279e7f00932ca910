"""Hostile text and data end clean (issue 18 items 1-3, 5): nothing a runner returns can crash
the store, what is written is read back, ``--fresh`` moves only a run directory it can lock, and
a second interrupt exits 130 with the resume line.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from counterfact import RunDirectoryError, compare_arms
from counterfact.exceptions import RunsFailed
from counterfact.orchestrator.storage.recordfiles import RunLogReader
from counterfact.orchestrator.storage.rundir import RunStore
from counterfact.probes.runner import MAX_MANIFEST_DEPTH

from ..conftest import TESTS, write_config

RUNNERS = TESTS / "runners.py"
FAULTS = TESTS / "fault_runners.py"
ARMS: list[dict[str, Any]] = [{"id": "base"}, {"id": "alt", "facets": {"answer": "no"}}]


def sweep(tmp_path: Path, inputs: dict[str, Any], executor: Any = "local", **kw: Any) -> Any:
    return compare_arms(
        ARMS,
        f"{RUNNERS}:hostile",
        scenarios=[{"id": "s", "inputs": inputs, "reference": "yes"}],
        comparator="exact",
        samples=3,
        executor=executor,
        out=tmp_path / "o",
        **kw,
    )


def test_a_lone_surrogate_in_output_and_manifest_is_escaped_and_read_back(tmp_path: Path) -> None:
    result = sweep(tmp_path, {"kind": "surrogate"})
    runs = list(RunLogReader(tmp_path / "o" / "runs.jsonl"))
    assert len(runs) == 6 and all(r.text_escaped and r.error is None for r in runs)
    alt = [r for r in runs if r.arm == "alt"]
    assert {r.output for r in alt} == {"caf\\udcff"}  # the six characters, not the surrogate
    assert runs[0].manifest == {"file": "\\udcff"}
    assert result.row("alt").flips == 3  # judged on the escaped text
    again = sweep(tmp_path, {"kind": "surrogate"})  # the resume reads every line back
    assert again.summary.execution.runs_reused == 6 and again.summary.execution.runs_used == 0


def test_a_lone_surrogate_in_an_error_is_escaped(tmp_path: Path) -> None:
    with pytest.raises(Exception, match=r"every one of the 6 runs failed|stopped after"):
        sweep(tmp_path, {"kind": "raise-surrogate"})
    (first, *_) = tuple(RunLogReader(tmp_path / "o" / "runs.jsonl"))
    assert first.error is not None and "caf\\udcff.txt" in first.error.message
    assert (
        json.loads((tmp_path / "o" / "summary.json").read_text())["execution"]["status"] == "failed"
    )


@pytest.mark.parametrize("depth", [MAX_MANIFEST_DEPTH, MAX_MANIFEST_DEPTH + 1])
def test_a_manifest_at_the_depth_limit_is_kept_and_one_past_it_is_refused(
    tmp_path: Path, depth: int
) -> None:
    ok = depth <= MAX_MANIFEST_DEPTH
    if ok:
        sweep(tmp_path, {"kind": "deep", "depth": depth})
    else:  # past the limit every run fails: the sweep says so
        with pytest.raises(RunsFailed):
            sweep(tmp_path, {"kind": "deep", "depth": depth})
    runs = list(RunLogReader(tmp_path / "o" / "runs.jsonl"))  # what is written reads back
    assert len(runs) >= 2
    if ok:
        assert all(r.error is None and r.manifest is not None for r in runs)
    else:
        assert all(r.error is not None and r.error.type == "RunnerReturnError" for r in runs)
        assert "deeper than 64 levels" in runs[0].error.message  # type: ignore[union-attr]


@pytest.mark.ray
@pytest.mark.usefixtures("ray_instance")
def test_hostile_records_on_ray(tmp_path: Path) -> None:
    sweep(tmp_path / "a", {"kind": "surrogate"}, executor="ray")
    runs = list(RunLogReader(tmp_path / "a" / "o" / "runs.jsonl"))
    assert len(runs) == 6 and all(r.text_escaped for r in runs)
    sweep(tmp_path / "b", {"kind": "deep", "depth": MAX_MANIFEST_DEPTH}, executor="ray")
    deep = list(RunLogReader(tmp_path / "b" / "o" / "runs.jsonl"))
    assert len(deep) == 6 and all(r.error is None for r in deep)


def test_fresh_refuses_a_folder_that_is_not_a_run_directory(tmp_path: Path) -> None:
    project = tmp_path / "myproject"
    (project / "src").mkdir(parents=True)
    (project / "README.md").write_text("mine")
    with pytest.raises(RunDirectoryError, match="is not a run directory"):
        compare_arms(ARMS, f"{RUNNERS}:echo_arm", executor="local", out=project, fresh=True)
    assert (project / "README.md").read_text() == "mine"  # not moved
    assert not list(tmp_path.glob("myproject.moved-*"))


def test_fresh_refuses_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RunDirectoryError, match="the working directory or a parent"):
        compare_arms(ARMS, f"{RUNNERS}:echo_arm", executor="local", out=".", fresh=True)


def test_fresh_refuses_a_directory_a_live_driver_holds(tmp_path: Path) -> None:
    out = tmp_path / "o"
    compare_arms(ARMS, f"{RUNNERS}:echo_arm", executor="local", out=out)
    held = RunStore(out)  # another driver holds the lock
    with held, pytest.raises(RunDirectoryError, match="in use by another counterfact process"):
        compare_arms(ARMS, f"{RUNNERS}:echo_arm", executor="local", out=out, fresh=True)
    assert (out / "runs.jsonl").exists() and not list(tmp_path.glob("o.moved-*"))


def test_a_second_interrupt_exits_130_with_the_resume_line(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    cfg = write_config(
        tmp_path,
        f"name: c\nrunner: {FAULTS}:steady\nsamples: 40\n"
        f"scenarios: [{{id: s, inputs: {{log: '{log}', sleep_s: 0.5}}, reference: 'yes'}}]\n"
        "comparator: {kind: exact}\nexecutor: {kind: local}\n"
        "arms: [{id: base}, {id: alt, facets: {answer: 'no'}}]\n",
    )
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "counterfact.orchestrator.cli", "run", str(cfg), "--out", str(out)]
    env = {**os.environ, "CF_SESSION": "1"}
    driver = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (
        (out / "runs.jsonl").exists() and (out / "runs.jsonl").read_text().count("\n") >= 2
    ):
        time.sleep(0.02)
    driver.send_signal(signal.SIGINT)
    time.sleep(0.1)  # inside the next 0.5 s run: the first stop is still waiting for it
    driver.send_signal(signal.SIGINT)
    _, err = driver.communicate(timeout=60)
    assert driver.returncode == 130, err.decode()
    assert "aborted at once (second interrupt)" in err.decode()
    assert "run the same command again to resume: counterfact run" in err.decode()
    assert "Traceback" not in err.decode()
    lines = (out / "runs.jsonl").read_text().splitlines()
    assert all(json.loads(line) for line in lines)  # every recorded line is whole


@pytest.mark.parametrize("text", ['{"runner": "x"', "[1, 2]"])
def test_a_damaged_sweep_json_is_one_clear_error(tmp_path: Path, text: str) -> None:
    out = tmp_path / "o"
    compare_arms(ARMS, f"{RUNNERS}:echo_arm", executor="local", comparator="exact", out=out)
    (out / "sweep.json").write_text(text)
    with pytest.raises(RunDirectoryError, match=r"sweep\.json is (damaged|not a JSON mapping)"):
        compare_arms(ARMS, f"{RUNNERS}:echo_arm", executor="local", comparator="exact", out=out)


def test_a_full_disk_is_one_error_line_and_the_resume_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # /dev/full is a real device whose every write fails with ENOSPC: runs.jsonl is pointed at it
    # once the store is open, as a disk that fills up mid-sweep would behave
    from tests.helpers import invoke

    cfg = write_config(
        tmp_path,
        f"name: f\nrunner: {RUNNERS}:echo_arm\nsamples: 3\nreference: 'yes'\n"
        "comparator: {kind: exact}\nexecutor: {kind: local}\n"
        "arms: [{id: base}, {id: alt, facets: {answer: 'no'}}]\n",
    )
    out = tmp_path / "o"
    opened = RunStore.open

    def open_then_fill(self: RunStore) -> None:
        opened(self)
        self._fh = Path("/dev/full").open("a", encoding="utf-8")  # noqa: SIM115

    monkeypatch.setattr(RunStore, "open", open_then_fill)
    code, _, err = invoke("run", str(cfg), "--out", str(out))
    assert code == 1
    last = err.strip().splitlines()[-1]
    assert (
        last.startswith("error: cannot write runs.jsonl in ") and "No space left on device" in last
    )
    assert "Traceback" not in err
    monkeypatch.setattr(RunStore, "open", opened)  # space freed: the same command resumes
    code, _, err = invoke("run", str(cfg), "--out", str(out))
    assert code == 0, err
    assert len((out / "runs.jsonl").read_text().splitlines()) == 6


def test_a_record_file_linked_outside_the_directory_is_refused(tmp_path: Path) -> None:
    foreign = tmp_path / "elsewhere.jsonl"
    foreign.write_text("precious\n")
    out = tmp_path / "o"
    out.mkdir()
    (out / "runs.jsonl").symlink_to(foreign)
    with pytest.raises(RunDirectoryError, match=r"is a link to .*outside the run directory"):
        compare_arms(ARMS, f"{RUNNERS}:echo_arm", executor="local", comparator="exact", out=out)
    assert foreign.read_text() == "precious\n"  # neither truncated nor appended to


def test_temporary_files_a_killed_driver_left_are_removed_on_open(tmp_path: Path) -> None:
    out = tmp_path / "o"
    compare_arms(ARMS, f"{RUNNERS}:echo_arm", executor="local", comparator="exact", out=out)
    litter = out / ".summary.json.0123456789ab.tmp"
    litter.write_text("half a summary")
    compare_arms(ARMS, f"{RUNNERS}:echo_arm", executor="local", comparator="exact", out=out)
    assert not litter.exists()


def _entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("*/*.json"))


@pytest.mark.parametrize("edit", ["output", "seed", "bare record"])
def test_an_edited_cache_entry_is_not_used_and_is_counted(tmp_path: Path, edit: str) -> None:
    cache = tmp_path / "cache"
    kw: dict[str, Any] = {"executor": "local", "comparator": "exact", "reference": "yes"}
    first = compare_arms(ARMS, f"{RUNNERS}:echo_arm", out=tmp_path / "a", cache_dir=cache, **kw)
    assert first.row("alt").flips == 3
    path = _entries(cache)[0]
    body = json.loads(path.read_text())
    record = json.loads(body["record"])
    if edit == "output":  # an answer flipped by hand: the hash no longer matches
        record["output"] = "yes" if record["output"] != "yes" else "no"
        body["record"] = json.dumps(record)
        path.write_text(json.dumps(body))
    elif edit == "seed":  # the record says another seed than its key: refused even if rehashed
        import hashlib

        record["seed"] = 999
        body["record"] = json.dumps(record)
        body["sha256"] = hashlib.sha256(body["record"].encode()).hexdigest()
        path.write_text(json.dumps(body))
    else:  # an entry without its check (as older versions wrote them)
        path.write_text(body["record"])
    again = compare_arms(ARMS, f"{RUNNERS}:echo_arm", out=tmp_path / "b", cache_dir=cache, **kw)
    assert again.summary.execution.cache_entries_rejected == 1
    assert (
        again.summary.execution.runs_from_cache == 5 and again.summary.execution.runs_used == 1
    )  # re-run
    assert again.row("alt").flips == 3 and again.row("base").flips == 0
    assert {(r.arm, r.seed) for r in again.runs} == {
        (a, s) for a in ("base", "alt") for s in range(3)
    }


def test_a_runs_file_copied_in_from_another_directory_is_refused(tmp_path: Path) -> None:
    kw: dict[str, Any] = {"executor": "local", "comparator": "exact", "reference": "yes"}
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    compare_arms(ARMS, f"{RUNNERS}:echo_arm", out=mine, samples=2, **kw)
    other: list[dict[str, Any]] = [{"id": "base"}, {"id": "alt", "facets": {"answer": "yes"}}]
    compare_arms(other, f"{RUNNERS}:echo_arm", out=theirs, samples=2, **kw)
    assert json.loads((mine / "sweep.json").read_text())["runs_first_line_sha256"]
    (mine / "runs.jsonl").write_bytes((theirs / "runs.jsonl").read_bytes())
    with pytest.raises(RunDirectoryError, match="is not the one this run directory recorded"):
        compare_arms(ARMS, f"{RUNNERS}:echo_arm", out=mine, samples=2, **kw)
    moved = compare_arms(ARMS, f"{RUNNERS}:echo_arm", out=tmp_path / "moved", samples=2, **kw)
    assert moved.row("alt").flips == 2  # a directory of its own is unaffected


def test_a_resume_that_stops_before_judging_leaves_no_stale_verdicts(tmp_path: Path) -> None:
    out = tmp_path / "o"
    kw: dict[str, Any] = {"executor": "local", "comparator": "exact", "reference": "yes"}
    compare_arms(ARMS, f"{RUNNERS}:echo_arm", out=out, **kw)
    (out / "report.html").write_text("<p>the last report</p>")
    before = (out / "verdicts.jsonl").read_text()
    with RunStore(out):  # a resume that is killed before it judges: it opened, nothing more
        pass
    assert not (out / "verdicts.jsonl").exists() and not (out / "report.html").exists()
    assert (out / "verdicts.previous.jsonl").read_text() == before  # kept, marked as previous
    assert (out / "report.previous.html").read_text() == "<p>the last report</p>"
    compare_arms(ARMS, f"{RUNNERS}:echo_arm", out=out, **kw)  # a resume that finishes
    assert (out / "verdicts.jsonl").read_text().count("\n") == 2


@pytest.mark.parametrize("what", ["exit", "interrupt", "base"])
def test_a_run_that_raises_a_base_exception_in_process_is_that_runs_failure(
    tmp_path: Path, what: str
) -> None:
    result = compare_arms(
        ARMS,
        f"{RUNNERS}:raises_base",
        scenarios=[{"id": "s", "inputs": {"what": what}, "reference": "yes"}],
        comparator="exact",
        executor="local",
        out=tmp_path / "o",
    )
    failed = [r for r in result.runs if r.error is not None]
    assert [(r.arm, r.seed) for r in failed] == [("alt", 0)]
    assert failed[0].error.type in ("SystemExit", "KeyboardInterrupt", "_Escape")  # type: ignore[union-attr]
    assert len(result.runs) == 6  # the sweep went on


def test_the_cli_exits_when_a_runner_leaves_a_thread_running(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path,
        f"name: t\nrunner: {RUNNERS}:leaves_a_thread\nsamples: 2\nreference: 'yes'\n"
        "comparator: {kind: exact}\nexecutor: {kind: local}\n"
        "arms: [{id: base}, {id: alt, facets: {x: 1}}]\n",
    )
    cmd = [sys.executable, "-m", "counterfact.orchestrator.cli", "run", str(cfg)]
    done = subprocess.run(
        [*cmd, "--out", str(tmp_path / "o"), "--no-report"], capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert (tmp_path / "o" / "verdicts.jsonl").exists()


@pytest.mark.ray
def test_sigterm_on_ray_records_and_prints_the_resume_line(tmp_path: Path) -> None:
    # ray.init installs a SIGTERM handler of its own (a C++ stack dump, no summary): the
    # graceful stop is put back once Ray has started
    cfg = write_config(
        tmp_path,
        f"name: r\nrunner: {FAULTS}:steady\nsamples: 40\n"
        f"scenarios: [{{id: s, inputs: {{sleep_s: 0.2, log: '{tmp_path / 'calls.log'}'}}, "
        "reference: 'yes'}]\ncomparator: {kind: exact}\nexecutor: {kind: ray, num_cpus: 2}\n"
        "arms: [{id: base}, {id: alt, facets: {answer: 'no'}}]\n",
    )
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "counterfact.orchestrator.cli", "run", str(cfg), "--out", str(out)]
    driver = subprocess.Popen(cmd, env={**os.environ, "CF_SESSION": "1"}, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (
        (out / "runs.jsonl").exists() and (out / "runs.jsonl").read_text().count("\n") >= 6
    ):
        time.sleep(0.1)
    driver.send_signal(signal.SIGTERM)
    _, err = driver.communicate(timeout=120)
    assert driver.returncode == 143, err.decode()[-3000:]
    assert "run the same command again to resume: counterfact run" in err.decode()
    assert json.loads((out / "summary.json").read_text())["execution"]["status"] == "interrupted"


def test_yaml_merge_keys_still_load_and_a_local_key_overrides() -> None:
    from counterfact.orchestrator.config.yamlload import load_yaml

    data = load_yaml("base: &b {x: 1, y: 1}\narm: {<<: *b, y: 2}\n")
    assert data["arm"] == {"x": 1, "y": 2}


def test_the_first_line_digest_follows_an_emptied_log_and_a_lone_unterminated_record(
    tmp_path: Path,
) -> None:
    kw: dict[str, Any] = {"executor": "local", "comparator": "exact", "reference": "yes"}
    out = tmp_path / "o"
    compare_arms(ARMS, f"{RUNNERS}:echo_arm", out=out, samples=2, **kw)
    (out / "runs.jsonl").write_text("")  # the user empties the log to run everything again
    compare_arms(ARMS, f"{RUNNERS}:echo_arm", out=out, samples=2, **kw)
    again = compare_arms(ARMS, f"{RUNNERS}:echo_arm", out=out, samples=2, **kw)
    assert again.summary.execution.runs_reused == 4  # the new first line was recorded, not the old
    first = (out / "runs.jsonl").read_text().splitlines()[0]
    (out / "runs.jsonl").write_text(first)  # one record, its newline lost in a crash
    compare_arms(ARMS, f"{RUNNERS}:echo_arm", out=out, samples=2, **kw)
    last = compare_arms(ARMS, f"{RUNNERS}:echo_arm", out=out, samples=2, **kw)
    assert last.summary.execution.runs_reused == 4


def test_fresh_with_a_cache_adopts_nothing_from_a_foreign_runs_file(tmp_path: Path) -> None:
    kw: dict[str, Any] = {"executor": "local", "comparator": "exact", "reference": "yes"}
    mine, theirs, cache = tmp_path / "mine", tmp_path / "theirs", tmp_path / "cache"
    compare_arms(ARMS, f"{RUNNERS}:echo_arm", out=mine, samples=2, **kw)
    compare_arms(ARMS, f"{RUNNERS}:echo_arm", out=theirs, samples=2, **kw)
    (mine / "runs.jsonl").write_bytes((theirs / "runs.jsonl").read_bytes())
    moved = compare_arms(
        ARMS, f"{RUNNERS}:echo_arm", out=mine, samples=2, fresh=True, cache_dir=cache, **kw
    )
    assert moved.summary.execution.runs_from_cache == 0 and moved.summary.execution.runs_used == 4


def test_an_ignored_sighup_stays_ignored_under_nohup(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path,
        f"name: n\nrunner: {FAULTS}:steady\nsamples: 20\n"
        f"scenarios: [{{id: s, inputs: {{sleep_s: 0.05, log: '{tmp_path / 'c.log'}'}}, "
        "reference: 'yes'}]\ncomparator: {kind: exact}\nexecutor: {kind: local}\n"
        "arms: [{id: base}, {id: alt, facets: {answer: 'no'}}]\n",
    )
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "counterfact.orchestrator.cli", "run", str(cfg), "--out", str(out)]
    driver = subprocess.Popen(
        cmd,
        stderr=subprocess.PIPE,
        env={**os.environ, "CF_SESSION": "1"},
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),  # what nohup does
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (out / "runs.jsonl").exists():
        time.sleep(0.05)
    driver.send_signal(signal.SIGHUP)
    _, err = driver.communicate(timeout=120)
    assert driver.returncode == 0, err.decode()[-2000:]
    assert json.loads((out / "summary.json").read_text())["execution"]["status"] == "complete"


def test_an_output_the_regex_cannot_search_in_time_is_a_failed_comparison(
    tmp_path: Path,
) -> None:
    # issue 27 item 2: the driver spun forever in re; now the search has a deadline, and an
    # output that exceeds it is that seed's failed comparison: the sweep is still judged
    arms: list[dict[str, Any]] = [
        {"id": "base", "facets": {"answer": "aaa"}},
        {"id": "alt", "facets": {"answer": "a" * 40 + "!"}},
    ]
    result = compare_arms(
        arms,
        f"{RUNNERS}:echo_arm",
        scenarios=[{"id": "s", "inputs": {}, "reference": "aaa"}],
        comparator={"kind": "regex", "pattern": "^(a|a)+$"},
        samples=2,
        executor="local",
        out=tmp_path / "o",
    )
    assert len(tuple(RunLogReader(tmp_path / "o" / "runs.jsonl"))) == 4  # every run is recorded
    alt = result.row("alt")
    assert alt.verdict == "inconclusive" and alt.failed_seeds == [0, 1]
    (doubt,) = [d for d in alt.reasons if d.code == "comparison-timed-out"]
    assert doubt.seeds == [0, 1] and "could not be compared with the reference in time" in alt.claim


@pytest.mark.parametrize("usd", [-20.0, float("nan"), float("inf")])
def test_a_negative_or_non_finite_cost_fails_its_run_and_never_lowers_the_budget(
    tmp_path: Path, usd: float
) -> None:
    result = compare_arms(
        ARMS,
        f"{RUNNERS}:costs_from_inputs",
        scenarios=[{"id": "s", "inputs": {"usd": usd}, "reference": "yes"}],
        comparator="exact",
        samples=3,
        executor="local",
        budget={"usd": 10.0},
        out=tmp_path / "o",
    )
    failed = [(r.arm, r.seed, r.error.type) for r in result.runs if r.error is not None]
    assert failed == [("alt", 0, "RunnerReturnError")]
    assert (
        "cost 'usd' must"
        in result.runs[[r.error is not None for r in result.runs].index(True)].error.message
    )  # type: ignore[union-attr]
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["execution"]["budget"]["spent"] == {"usd": 5.0}


def test_sigterm_while_judging_says_what_is_recorded_and_exits_143(tmp_path: Path) -> None:
    """Issue 45 item 10: SIGTERM after the runs, while the statistics were judged, ended the
    process without a word (the graceful stop holds only while runs execute). The signal is
    sent from inside the judging step of the real command, so it lands there every time."""
    cfg = write_config(
        tmp_path,
        f"name: c\nrunner: {FAULTS}:steady\nsamples: 4\n"
        f"scenarios: [{{id: s, inputs: {{log: '{tmp_path / 'calls.log'}'}}, reference: 'yes'}}]\n"
        "comparator: {kind: exact}\nexecutor: {kind: local}\n"
        "arms: [{id: base}, {id: alt, facets: {answer: 'no'}}]\n",
    )
    out = tmp_path / "o"
    script = (
        "import os, signal, sys\n"
        "import counterfact.orchestrator.drivers.sweep as s\n"
        "from counterfact.orchestrator.cli import entry\n"
        "judge = s._judge\n"
        "def judging(*a, **k):\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    return judge(*a, **k)\n"
        "s._judge = judging\n"
        f"sys.argv = ['counterfact', 'run', {str(cfg)!r}, '--out', {str(out)!r}]\n"
        "entry()\n"
    )
    got = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert got.returncode == 143, got.stderr
    assert "stopped by SIGTERM while no run was executing" in got.stderr
    assert "Traceback" not in got.stderr and "run the same command again" in got.stderr
    assert (
        not (out / "summary.json").exists()
        and len((out / "runs.jsonl").read_text().splitlines()) == 8
    )
    cmd = [sys.executable, "-m", "counterfact.orchestrator.cli", "run", str(cfg), "--out", str(out)]
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert again.returncode == 0, again.stderr
    assert "resumed: 8 runs read back, 0 from the cache, 0 run now" in again.stderr
