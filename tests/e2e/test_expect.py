"""Checks per question (issue 29 item 2): a question's own ``expect`` judges it, the sweep's
comparator the rest; the records, exports and report say which check judged each question.
"""

from __future__ import annotations

import csv
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from counterfact.exceptions import ConfigError
from counterfact.orchestrator.config.loading import load_sweep
from counterfact.orchestrator.drivers.outputs.export import export, load_verdicts
from counterfact.orchestrator.drivers.outputs.report import write_report
from counterfact.orchestrator.drivers.sweep import SweepResult, run_sweep
from counterfact.records import read_summary, read_verdicts

from ..helpers import invoke
from ..orchestrator.drivers.outputs.test_report import CHROMIUM, HEADLESS

SEEDS = 4

# What the program answers per question, on the baseline and on the challenger. Each is chosen
# so that the sweep's comparator (contains) would judge it otherwise than the question's check.
OUTPUTS = {
    # numeric within 0.5: 42.3 is 42 (contains reads "423", not "42"); 45 is not
    "num": ("The answer is 42.3", "about 45"),
    # one-of: naming two options is no answer (contains still finds "paris")
    "mc": ("I pick Paris.", "Paris? No: London."),
    # regex: the answer after 'Answer:' is C (contains still finds "answer b" further on)
    "re": ("Answer: B", "Answer: C (not answer: B)"),
    # exact: "Yes" is not "yes" (contains ignores case)
    "ex": ("yes", "Yes"),
    # free text, the sweep's own comparator: Canberra is named, then it is not
    "free": ("The capital is Canberra.", "It is Sydney."),
}
QUESTIONS: list[dict[str, Any]] = [
    {"id": "num", "reference": "42", "expect": {"kind": "numeric", "tolerance": 0.5}},
    {
        "id": "mc",
        "reference": "Paris",
        "expect": {"kind": "one-of", "options": ["Paris", "London", "Berlin"]},
    },
    {
        "id": "re",
        "reference": "Answer: B",
        "expect": {"kind": "regex", "pattern": "Answer: ([A-D])"},
    },
    {"id": "ex", "reference": "yes", "expect": "exact"},
    {"id": "free", "reference": "Canberra"},
]
CHECKS = {
    "num": "numeric(tolerance=0.5)",
    "mc": 'one-of(options=["Paris", "London", "Berlin"])',
    "re": "regex(pattern=/Answer: ([A-D])/)",
    "ex": "exact",
    "free": "sweep default: contains",
}

RUNNER = f"""
OUTPUTS = {OUTPUTS!r}

def run(ctx):
    base, alt = OUTPUTS[ctx.scenario.id]
    return alt if ctx.arm.id == "alt" else base
"""


def _config(
    folder: Path, questions: list[dict[str, Any]] | dict[str, Any], runner: str = RUNNER
) -> Path:
    (folder / "runner.py").write_text(runner, encoding="utf-8")
    config = {
        "name": "mixed",
        "runner": "runner.py:run",
        "samples": SEEDS,
        "comparator": "contains",
        "executor": "local",
        "arms": [{"id": "base"}, {"id": "alt", "facets": {"prompt": "v2"}}],
        "scenarios": questions,
    }
    path = folder / "sweep.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def _run(folder: Path, questions: list[dict[str, Any]] | dict[str, Any]) -> SweepResult:
    return run_sweep(load_sweep(_config(folder, questions)), run_dir=folder / "out")


def _flips(result: SweepResult) -> dict[tuple[str, str], int | None]:
    return {(r.scenario, r.arm): r.flips for r in result.rows}


def test_a_mixed_set_is_judged_by_each_question_s_own_check(tmp_path: Path) -> None:
    result = _run(tmp_path, QUESTIONS)
    flips = _flips(result)
    # every question's own check: the baseline keeps the answer, the challenger changes it
    for q in OUTPUTS:
        assert flips[(q, "base")] == 0, q
        assert flips[(q, "alt")] == SEEDS, q
        assert result.row("alt", q).verdict == "confirmed", q
    assert {r.scenario: r.check for r in result.rows} == CHECKS
    assert all(r.check == CHECKS[r.scenario] for r in result.rows)  # the baseline's row too


def test_the_sweep_s_comparator_alone_would_judge_the_set_otherwise(tmp_path: Path) -> None:
    # The same runs with every expect removed: contains judges all five, and four of them differ
    # from what their own checks said (the outputs above are built for it).
    bare = [{k: v for k, v in q.items() if k != "expect"} for q in QUESTIONS]
    flips = _flips(_run(tmp_path, bare))
    assert flips[("num", "base")] == SEEDS  # "42.3" holds no whole word "42"
    assert flips[("mc", "alt")] == 0  # "paris" is named (beside "london")
    assert flips[("re", "alt")] == 0  # "answer b" occurs
    assert flips[("ex", "alt")] == 0  # "yes" once case-folded
    assert (flips[("free", "base")], flips[("free", "alt")]) == (0, SEEDS)  # the same check


def test_records_exports_and_the_report_name_the_check(tmp_path: Path) -> None:
    _run(tmp_path, QUESTIONS)
    out = tmp_path / "out"
    lines = [json.loads(x) for x in (out / "verdicts.jsonl").read_text().splitlines()]
    assert {(x["scenario"], x["check"]) for x in lines} == set(CHECKS.items())
    assert all(x["schema_version"] == 10 for x in lines)
    assert {r.scenario: r.check for r in read_verdicts(out)} == CHECKS
    frame = load_verdicts(out)
    assert str(frame["check"].dtype) == "string"
    assert dict(zip(frame["scenario"], frame["check"], strict=True)) == CHECKS
    (written,) = [p for p in export(out, "csv") if p.name == "verdicts.csv"]
    with written.open(newline="", encoding="utf-8") as fh:
        exported = {row["scenario"]: row["check"] for row in csv.DictReader(fh)}
    assert exported == CHECKS
    text = write_report(out).read_text(encoding="utf-8")
    assert '<td class="check">numeric(tolerance=0.5)</td>' in text
    assert '<td class="check">sweep default: contains</td>' in text
    assert (
        "Judged by: <code>one-of(options=[&quot;Paris&quot;, &quot;London&quot;, "
        "&quot;Berlin&quot;])</code>"
    ) in text
    # the resolved config keeps each question's expect as a re-loadable check
    recorded = {s["id"]: s.get("expect") for s in read_summary(out).config["scenarios"]}
    assert recorded["num"] == {"kind": "numeric", "tolerance": 0.5}
    assert recorded["ex"] == {"kind": "exact"} and recorded["free"] is None


def test_a_changed_expect_is_rejudged_on_resume_without_rerunning(tmp_path: Path) -> None:
    first = _run(tmp_path, QUESTIONS)
    assert (
        first.row("base", "num").flips == 0 and first.summary.execution.runs_used == 2 * 5 * SEEDS
    )
    tighter = [dict(q) for q in QUESTIONS]
    tighter[0] = tighter[0] | {"expect": {"kind": "numeric", "tolerance": 0.1}}
    again = _run(tmp_path, tighter)  # the same run directory: a resume
    assert (
        again.summary.execution.runs_used == 0
        and again.summary.execution.runs_reused == 2 * 5 * SEEDS
    )
    assert again.row("base", "num").flips == SEEDS  # 42.3 is more than 0.1 from 42
    assert again.row("base", "num").check == "numeric(tolerance=0.1)"
    assert again.row("alt", "mc").flips == SEEDS  # the other questions judged as before


def test_a_jsonl_eval_set_carries_expect_per_row(tmp_path: Path) -> None:
    lines = [json.dumps(q | {"inputs": {"q": q["id"]}}) for q in QUESTIONS]
    (tmp_path / "set.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = _run(tmp_path, {"file": "set.jsonl"})
    assert {r.scenario: r.check for r in result.rows} == CHECKS
    assert all(r.flips == (SEEDS if r.arm == "alt" else 0) for r in result.rows)


def test_a_csv_eval_set_takes_a_kind_a_json_object_or_nothing_in_its_expect_column(
    tmp_path: Path,
) -> None:
    with (tmp_path / "set.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "q", "reference", "expect"])
        w.writerow(["num", "n", "42", json.dumps({"kind": "numeric", "tolerance": 0.5})])
        w.writerow(["ex", "e", "yes", "exact"])
        w.writerow(["free", "f", "Canberra", ""])
    sweep = load_sweep(_config(tmp_path, {"file": "set.csv"}))
    checks = {s.id: s.check_label(sweep.comparator) for s in sweep.scenarios}
    assert checks == {k: CHECKS[k] for k in ("num", "ex", "free")}
    assert sweep.scenarios[0].inputs == {"q": "n"}  # expect is not an input


def test_questions_with_the_same_check_share_one_comparator(tmp_path: Path) -> None:
    rows = [
        {"id": f"q{i}", "reference": str(i), "expect": {"kind": "numeric", "tolerance": 0.5}}
        for i in range(200)
    ]
    rows += [{"id": "r", "reference": "Answer: A", "expect": {"kind": "regex", "pattern": "(A)"}}]
    (tmp_path / "set.jsonl").write_text("\n".join(map(json.dumps, rows)), encoding="utf-8")
    sweep = load_sweep(_config(tmp_path, {"file": "set.jsonl"}))
    built = {id(s.expect) for s in sweep.scenarios}
    assert len(built) == 2  # one numeric check for 200 questions, one regex


BAD = [
    (
        {"kind": "fuzzy"},
        "42",
        r"scenarios\[1\]\.expect\.kind: unknown comparator kind 'fuzzy'; known: contains, "
        r"custom, exact, judge, normalized, numeric, one-of, regex, similarity$",
    ),
    (
        {"kind": "regex", "pattern": "(a"},
        "a",
        r"^scenarios\[1\]\.expect\.pattern: 'pattern' is not a valid regular expression",
    ),
    (
        {"kind": "numeric", "tolerance": "abc"},
        "42",
        r"^scenarios\[1\]\.expect\.tolerance: Input should be a valid number \(received 'abc'\)",
    ),
    (
        {"kind": "numeric", "tolerance": -1},
        "42",
        r"^scenarios\[1\]\.expect\.tolerance: 'tolerance' must be >= 0, got -1$",
    ),
    (
        {"kind": "one-of", "options": ["Paris", "paris!"]},
        "Paris",
        r"^scenarios\[1\]\.expect\.options: 'options' holds 'Paris' and 'paris!', the same once",
    ),
    (
        {"kind": "exact", "options": ["a", "b"]},
        "a",
        r"^scenarios\[1\]\.expect: 'options' applies only to kind 'one-of', not 'exact'",
    ),
]


@pytest.mark.parametrize(("expect", "reference", "match"), BAD)
def test_a_bad_expect_names_the_question_and_its_field(
    tmp_path: Path, expect: dict[str, Any], reference: str, match: str
) -> None:
    questions = [QUESTIONS[0], {"id": "bad", "reference": reference, "expect": expect}]
    with pytest.raises(ConfigError, match=match):
        load_sweep(_config(tmp_path, questions))


REFUSED = [
    (
        {"kind": "numeric", "tolerance": 0.01},
        "forty-two",
        r"question 'bad': its expect \(numeric\) needs a number in the reference, got "
        r"'forty-two'; write the expected number, or change scenarios\[1\]\.expect",
    ),
    (
        {"kind": "regex", "pattern": r"Answer: (\w+)"},
        "Canberra",
        r"question 'bad': its expect's pattern /Answer: \(\\w\+\)/ extracts nothing from the "
        r"reference 'Canberra'; fix scenarios\[1\]\.expect\.pattern or the reference",
    ),
    (
        {"kind": "one-of", "options": ["yes", "no"]},
        "yes or no",
        r"question 'bad': its expect \(one-of\) needs the reference to name exactly one of its "
        r"options \['yes', 'no'\]; 'yes or no' names 2 \(yes, no\)",
    ),
]


@pytest.mark.parametrize(("expect", "reference", "match"), REFUSED)
def test_a_reference_the_question_s_check_cannot_judge_is_refused_before_any_run(
    tmp_path: Path, expect: dict[str, Any], reference: str, match: str
) -> None:
    questions = [QUESTIONS[0], {"id": "bad", "reference": reference, "expect": expect}]
    with pytest.raises(ConfigError, match=match) as caught:
        load_sweep(_config(tmp_path, questions))
    assert caught.value.field == "scenarios[1].reference"
    assert not (tmp_path / "out").exists()


def test_a_per_question_regex_that_backtracks_on_its_reference_is_refused(tmp_path: Path) -> None:
    # The regex check's time bound (orchestrator/config/regexcheck.py) applies to expect too.
    questions = [QUESTIONS[0], {"id": "slow", "reference": "a" * 40 + "!"}]
    questions[1]["expect"] = {"kind": "regex", "pattern": "(a|a)+$"}
    with pytest.raises(ConfigError, match=r"its expect's pattern /\(a\|a\)\+\$/ took more than"):
        load_sweep(_config(tmp_path, questions))


def test_a_bad_expect_in_a_scenario_file_names_the_file_and_line(tmp_path: Path) -> None:
    lines = [json.dumps(QUESTIONS[0]), json.dumps({"id": "b", "expect": {"kind": "one-of"}})]
    (tmp_path / "set.jsonl").write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"set\.jsonl: line 2: expect: kind 'one-of' needs "):
        load_sweep(_config(tmp_path, {"file": "set.jsonl"}))
    with (tmp_path / "set.csv").open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([["id", "reference", "expect"], ["a", "42", "{numeric}"]])
    with pytest.raises(ConfigError, match=r"set\.csv: row 1: expect: '\{numeric\}' is not a JSON"):
        load_sweep(_config(tmp_path, {"file": "set.csv"}))
    lines = [json.dumps({"id": "n", "reference": "many", "expect": "numeric"})]
    (tmp_path / "set.jsonl").write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"question 'n': its expect \(numeric\) needs a number"):
        load_sweep(_config(tmp_path, {"file": "set.jsonl"}))


BISECT_RUNNER = """
def run(ctx):
    if "fact:c" in ctx.arm.ablations:
        return "it is right"
    return "it is wrong, sadly"
"""


@pytest.mark.parametrize(("expect", "verdict"), [("contains", "confirmed"), (None, "inconclusive")])
def test_bisect_judges_its_question_by_the_question_s_check(
    tmp_path: Path, expect: str | None, verdict: str
) -> None:
    # exact (the sweep's comparator) flips every baseline run ("it is wrong, sadly" is not
    # "wrong"), so nothing can be searched; the question's contains check finds fact:c.
    (tmp_path / "runner.py").write_text(BISECT_RUNNER, encoding="utf-8")
    question: dict[str, Any] = {"id": "why", "reference": "wrong"}
    if expect is not None:
        question["expect"] = expect
    config = {
        "name": "b",
        "runner": "runner.py:run",
        "samples": 3,
        "comparator": "exact",
        "executor": "local",
        "scenarios": [question, {"id": "other", "reference": "x"}],
        "bisect": {"suspects": ["fact:a", "fact:b", "fact:c"], "scenario": "why"},
    }
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    from counterfact.orchestrator.config.loading import load_bisect
    from counterfact.orchestrator.drivers.bisect import run_bisect

    record = run_bisect(load_bisect(path), run_dir=tmp_path / "out").record
    assert record.verdict == verdict
    if expect is None:
        assert record.reason == "unstable-baseline"  # every baseline run "flipped"
    else:
        assert record.culprits == [["fact:c"]]
        assert record.comparator == "output contains the reference"


def test_the_python_api_takes_a_callable_as_a_question_s_expect(tmp_path: Path) -> None:
    from counterfact import compare_arms

    def same_length(reference: str, output: str) -> bool:
        return len(reference) != len(output)

    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        lambda ctx: "abcd" if ctx.arm.id == "alt" else "wxyz",
        samples=3,
        comparator="exact",
        executor="local",
        scenarios=[
            {"id": "len", "reference": "pqrs", "expect": same_length},
            {"id": "plain", "reference": "wxyz"},
        ],
    )
    assert (result.row("base", "len").flips, result.row("alt", "len").flips) == (0, 0)
    assert (result.row("base", "plain").flips, result.row("alt", "plain").flips) == (0, 3)
    assert result.row("alt", "len").check == f"custom(target={__name__}:{same_length.__qualname__})"
    assert result.row("alt", "plain").check == "sweep default: exact"


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (.ci/run installs it)")
def test_a_large_set_s_report_shows_and_filters_by_the_check_in_headless_chromium(
    tmp_path: Path,
) -> None:
    # 30 questions (above the 20 that get a section each): the compact table, drawn by the
    # page's script, has a check column, and filtering on a check's words keeps its questions.
    questions = [
        {"id": f"q{i}", "inputs": {"i": i}, "reference": "42"}
        | ({"expect": {"kind": "numeric", "tolerance": 0.5}} if i % 3 == 0 else {})
        for i in range(30)
    ]
    config = _config(tmp_path, questions, runner="def run(ctx):\n    return '42'\n")
    run_sweep(load_sweep(config), run_dir=tmp_path / "out")
    page = write_report(tmp_path / "out").as_uri()
    dom = subprocess.run(
        [*HEADLESS, "--dump-dom", page + "#q=numeric"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert "<th>check</th>" in dom
    assert "rows 1-20 of 20 (filtered from 60)" in dom  # 10 questions x 2 arms
    assert dom.count("<td>numeric(tolerance=0.5)</td>") == 20
    assert "<td>sweep default: contains</td>" not in dom


def test_the_shipped_mixed_checks_example_judges_each_question_by_its_own_check(
    tmp_path: Path,
) -> None:
    # configs/mixed_checks.yaml, as docs/how-to/per-question-checks.md runs it
    config = Path(__file__).resolve().parents[2] / "configs" / "mixed_checks.yaml"
    code, _, err = invoke("run", str(config), "--out", str(tmp_path / "out"))
    assert code == 0, err
    rows = read_verdicts(tmp_path / "out")
    assert {r.scenario: r.check for r in rows} == {
        "pi": "numeric(tolerance=0.005)",
        "metres": "numeric(tolerance=0)",
        "planet": 'one-of(options=["Mercury", "Venus", "Jupiter", "Mars"])',
        "capital": "sweep default: contains",
        "letter": r"regex(pattern=/[Aa]nswer:\s*([A-Za-z])/)",
        "prime": "exact",
    }
    assert all(r.flips == 0 for r in rows if r.is_baseline)  # the careful answers all hold
    assert all(r.verdict == "confirmed" for r in rows if not r.is_baseline)


def test_validate_says_how_the_questions_are_judged(tmp_path: Path) -> None:
    code, out, err = invoke("validate", str(_config(tmp_path, QUESTIONS)))
    assert code == 0, err
    assert out.splitlines()[-1] == (
        "checks: 4 question(s) with their own expect (exact, numeric, one-of, regex; 4 distinct), "
        "1 by the sweep's comparator (contains)"
    )
    bare = [{k: v for k, v in q.items() if k != "expect"} for q in QUESTIONS]
    code, out, _ = invoke("validate", str(_config(tmp_path, bare)))
    assert code == 0 and "checks:" not in out  # nothing to say: the comparator judges all


def test_a_verdict_line_from_before_version_9_loads_without_a_check(tmp_path: Path) -> None:
    from counterfact.records import VerdictRecord

    _run(tmp_path, QUESTIONS)
    line = json.loads((tmp_path / "out" / "verdicts.jsonl").read_text().splitlines()[0])
    del line["check"]
    old = VerdictRecord.model_validate(line | {"schema_version": 8})
    assert old.check is None and old.schema_version == 8


def test_one_of_as_the_sweep_s_comparator_refuses_a_reference_it_cannot_read(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path, [{"id": "a", "reference": "Paris"}, {"id": "b", "reference": "x"}])
    text = config.read_text().replace(
        "comparator: contains", "comparator: {kind: one-of, options: [Paris, London]}"
    )
    config.write_text(text, encoding="utf-8")
    with pytest.raises(
        ConfigError, match=r"the one-of comparator needs the reference to name "
    ) as e:
        load_sweep(config)
    assert e.value.field == "scenarios[1].reference"
    assert "fix the reference or comparator.options" in str(e.value)


HOSTILE_ROWS = 200
HOSTILE_RUNNER = """
def run(ctx):
    return "a" * 40 + "b" if ctx.arm.id == "alt" else "aaa"
"""


def test_many_backtracking_patterns_are_judged_within_the_sweep_s_regex_budget(
    tmp_path: Path,
) -> None:
    # issue 45 item 7: 200 questions whose patterns backtrack on the outputs took 24 minutes,
    # one 1 s deadline after another, and every resume or re-judge paid it again
    questions = [
        {
            "id": f"q{i}",
            "reference": "aaa",
            "expect": {"kind": "regex", "pattern": f"^(?:q{i})?(a|a)+$"},
        }
        for i in range(HOSTILE_ROWS)
    ]
    path = _config(tmp_path, questions, HOSTILE_RUNNER)
    yaml_config = yaml.safe_load(path.read_text(encoding="utf-8"))
    yaml_config["samples"] = 2
    path.write_text(yaml.safe_dump(yaml_config, sort_keys=False), encoding="utf-8")
    started = time.monotonic()
    result = run_sweep(load_sweep(path), run_dir=tmp_path / "out")
    elapsed = time.monotonic() - started
    # the 5 s budget, then 20 ms for each new pattern and 5 ms for one that timed out (about
    # 10 s on a quiet machine; slack for a loaded one), the runs and the judging; was > 400 s
    assert elapsed < 45, elapsed
    alt = [r for r in result.rows if r.arm == "alt"]
    assert len(alt) == HOSTILE_ROWS
    reasons = [d for r in alt for d in r.reasons if d.code == "comparison-timed-out"]
    assert len(reasons) == HOSTILE_ROWS  # every affected row says so
    texts = " ".join(str(d) for d in reasons)
    assert "took more than 1 s" in texts and "the sweep's 5 s of slow regex searching" in texts
