"""A question file is data: no scenario file, in any format, through any command, can make
counterfact import or call code (issue 44).

Every hostile target is paired with a marker file that appears if it ran: ``evil.py`` and
``evilmod.py`` write it when imported, and ``importlib:import_module`` called with a question's
reference ``evilmod`` would import the latter. The stdlib names the attack used (``os:popen``
...) are refused the same way; the marker proves that nothing was even imported.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.helpers import invoke

AGENT = """\
def run(ctx):
    return "r"  # os.popen(reference, "r") would run the reference as a shell command
"""

EVIL = """\
import pathlib
pathlib.Path(__file__).with_name("PWNED").write_text("ran")

def boom(reference, output):
    pathlib.Path(__file__).with_name("PWNED").write_text("called")
    return True
"""

CHECKS = """\
def same(reference, output):
    return reference.strip().lower() != output.strip().lower()
"""

HOSTILE = [
    ("touch PWNED", "os:popen"),
    ("touch PWNED", "os:system"),
    ("touch PWNED", "subprocess:run"),
    ("open('PWNED', 'w')", "builtins:eval"),
    ("evilmod", "importlib:import_module"),
    ("r", "evil.py:boom"),
    ("r", "evilmod:boom"),
]
"""(reference, target): what a hostile question file pairs."""

FORMATS = ["jsonl", "csv", "yaml", "parquet"]


def _rows(reference: str, expect: Any) -> list[dict[str, Any]]:
    return [
        {"id": "q0", "reference": reference, "expect": expect},
        {"id": "q1", "reference": "A"},
    ]


def _write_set(folder: Path, kind: str, rows: list[dict[str, Any]]) -> Path:
    path = folder / f"set.{kind}"
    cells = [
        r
        | {
            "expect": json.dumps(r["expect"])
            if isinstance(r.get("expect"), dict)
            else r.get("expect", "")
        }
        for r in rows
    ]
    if kind == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    elif kind == "yaml":
        path.write_text(json.dumps(rows), encoding="utf-8")  # JSON is YAML
    elif kind == "csv":
        with path.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=["id", "reference", "expect"])
            writer.writeheader()
            writer.writerows(cells)
    else:
        pq.write_table(pa.Table.from_pylist(cells), path)
    return path


def _folder(tmp_path: Path, kind: str, expect: Any, reference: str, extra: str = "") -> Path:
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    (tmp_path / "evil.py").write_text(EVIL, encoding="utf-8")
    (tmp_path / "evilmod.py").write_text(EVIL, encoding="utf-8")
    (tmp_path / "mychecks.py").write_text(CHECKS, encoding="utf-8")
    _write_set(tmp_path, kind, _rows(reference, expect))
    cfg = tmp_path / "sweep.yaml"
    cfg.write_text(
        "name: data\nrunner: agent.py:run\nsamples: 2\ncomparator: exact\nexecutor: local\n"
        f"scenarios: {{file: set.{kind}}}\n"
        "arms: [{id: base}, {id: alt, facets: {x: 1}}]\n"
        "bisect: {suspects: [a, b], scenario: q0}\n" + extra,
        encoding="utf-8",
    )
    return cfg


def _refused(tmp_path: Path, code: int, err: str) -> None:
    assert code == 2, err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, err
    assert "names code, and a question file is data" in errors[0]
    assert "checks:" in errors[0]  # the fix
    assert not (tmp_path / "PWNED").exists(), "a hostile target ran"
    assert not (tmp_path / "out").exists(), "a refused sweep wrote a run directory"


@pytest.mark.parametrize("kind", FORMATS)
@pytest.mark.parametrize(("reference", "target"), HOSTILE)
def test_a_custom_target_in_a_question_file_is_refused_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, reference: str, target: str
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))  # evilmod would be importable
    monkeypatch.chdir(tmp_path)
    cfg = _folder(tmp_path, kind, {"kind": "custom", "target": target}, reference)
    code, _, err = invoke("run", str(cfg), "--out", str(tmp_path / "out"))
    _refused(tmp_path, code, err)
    assert "row 1" in err or "line 1" in err or "item 1" in err  # the row is named


@pytest.mark.parametrize("kind", FORMATS)
def test_the_shorthand_target_in_a_question_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """``"expect": "evil.py:boom"`` is shorthand for a custom check: refused the same way."""
    monkeypatch.chdir(tmp_path)
    cfg = _folder(tmp_path, kind, "evil.py:boom", "A")
    code, _, err = invoke("run", str(cfg), "--out", str(tmp_path / "out"))
    _refused(tmp_path, code, err)


@pytest.mark.parametrize(
    "command",
    [
        ("validate",),
        ("validate", "--smoke"),
        ("bisect",),
    ],
)
@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_every_command_that_reads_a_question_file_refuses_code_in_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, command: tuple[str, ...]
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    cfg = _folder(tmp_path, kind, {"kind": "custom", "target": "evil.py:boom"}, "A")
    args = [*command, str(cfg)]
    if command[0] == "bisect":
        args += ["--out", str(tmp_path / "out")]
    code, _, err = invoke(*args)
    _refused(tmp_path, code, err)


def test_a_data_file_with_code_is_refused_even_outside_the_sampled_subset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``limit: 1`` keeps q0 only; the hostile row is q1: the file is refused whole."""
    monkeypatch.chdir(tmp_path)
    cfg = _folder(tmp_path, "jsonl", None, "A")
    rows = [
        {"id": "q0", "reference": "A"},
        {"id": "q1", "reference": "A", "expect": "evil.py:boom"},
    ]
    _write_set(tmp_path, "jsonl", rows)
    cfg.write_text(
        cfg.read_text().replace("{file: set.jsonl}", "{file: set.jsonl, limit: 1}"),
        encoding="utf-8",
    )
    code, _, err = invoke("run", str(cfg), "--out", str(tmp_path / "out"))
    _refused(tmp_path, code, err)
    assert "line 2" in err


@pytest.mark.parametrize("kind", FORMATS)
def test_a_question_picks_a_check_the_sweep_file_declares_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """The sweep file's ``checks:`` table is the way in: q0's reference 'R' matches output 'r'
    only under the declared case-blind check, so its baseline holds on every seed."""
    monkeypatch.chdir(tmp_path)
    cfg = _folder(
        tmp_path,
        kind,
        {"kind": "custom", "target": "same_text"},
        "R",
        extra="checks: {same_text: mychecks.py:same}\n",
    )
    code, _out, err = invoke("run", str(cfg), "--out", str(tmp_path / "out"))
    assert code == 0, err
    lines = (tmp_path / "out" / "verdicts.jsonl").read_text().splitlines()
    q0 = [v for v in map(json.loads, lines) if v["scenario"] == "q0"]
    assert all(v["check"].startswith("custom(") and v["check"].endswith(":same)") for v in q0)
    assert all(v["flips"] == 0 for v in q0), q0  # 'R' against 'r': the same text to this check
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["config"]["checks"] == {"same_text": "mychecks.py:same"}


def test_a_bare_declared_name_is_that_check_and_an_undeclared_name_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = _folder(
        tmp_path, "csv", "same_text", "a", extra="checks: {same_text: mychecks.py:same}\n"
    )
    code, out, err = invoke("validate", str(cfg))
    assert code == 0, err
    assert "custom" in out
    cfg = _folder(
        tmp_path,
        "jsonl",
        {"kind": "custom", "target": "other"},
        "a",
        extra="checks: {same_text: mychecks.py:same}\n",
    )
    code, _, err = invoke("validate", str(cfg))
    assert code == 2
    assert "'other' names code" in err and "declared checks: same_text" in err


def test_plan_reads_a_run_directory_without_importing_what_its_records_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run directory is data too: ``plan`` reads its recorded config (here doctored to name
    ``evil.py:boom`` as a question's check and the runner) and imports none of it."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    cfg = _folder(tmp_path, "jsonl", None, "A")
    code, _, err = invoke("run", str(cfg), "--out", str(tmp_path / "pilot"))
    assert code == 0, err
    summary_path = tmp_path / "pilot" / "summary.json"
    summary = json.loads(summary_path.read_text())
    summary["config"]["runner"] = "evil.py:boom"
    summary["config"]["scenarios"][0]["expect"] = {"kind": "custom", "target": "evilmod:boom"}
    summary_path.write_text(json.dumps(summary))
    code, out, err = invoke("plan", str(tmp_path / "pilot"))
    assert code == 0, err
    assert "alt" in out  # the plan was made from the records
    assert not (tmp_path / "PWNED").exists(), "plan imported code a run directory named"


def test_only_the_sweep_resolver_imports_targets() -> None:
    """Everything that reads data (the viewer, report, export, plan, the importers, resume's
    record reading) is kept from importing code by construction: the two functions that turn a
    target's text into a callable are called from the resolver and the check builder only."""
    root = Path(__file__).resolve().parents[2]
    allowed = {
        Path("orchestrator/config/resolve.py"),  # runner: the sweep file's
        Path("orchestrator/config/checks.py"),  # comparator, similarity, declared checks
        Path("orchestrator/config/targets.py"),  # defines parse_target
        Path(
            "orchestrator/engine/loading/loader.py"
        ),  # defines load_target; loads a shipped runner
    }
    callers = set()
    for folder in ("orchestrator", "probes", "verdicts", "records", "counterfact"):
        for path in (root / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            if "load_target(" in text or "parse_target(" in text:
                callers.add(path.relative_to(root))
    assert callers <= allowed, sorted(map(str, callers - allowed))
