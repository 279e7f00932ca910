"""report.html (issue 12): written by run and bisect, rebuilt by `counterfact report`, checked in
a real headless Chromium."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from counterfact import RunContext, compare_arms
from counterfact.orchestrator.drivers.outputs.report import report_data, write_report
from counterfact.records import read_summary

from ....conftest import TESTS, write_config
from ....helpers import invoke

QUICKSTART = TESTS.parent / "configs" / "quickstart.yaml"
CHROMIUM = next(
    (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
)


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("qs") / "run"
    code, stdout, err = invoke("run", str(QUICKSTART), "--executor", "local", "--out", str(out))
    assert code == 0, err
    assert f"report: {out / 'report.html'}" in stdout
    return out


class _Dom(HTMLParser):
    """Figures with their arm, and every element that could load something."""

    def __init__(self) -> None:
        super().__init__()
        self.figures: list[dict[str, str | None]] = []
        self.svgs_in_figures = 0
        self.table_arms: list[str] = []
        self.sections: list[str] = []
        self.loads: list[str] = []
        self.inline_scripts = 0
        self._in_figure = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "figure":
            self.figures.append(found)
            self._in_figure += 1
        if tag == "svg" and self._in_figure:
            self.svgs_in_figures += 1
        if tag == "tr" and found.get("data-arm"):
            self.table_arms.append(str(found["data-arm"]))
        if tag == "section" and found.get("data-arm"):
            self.sections.append(str(found["data-arm"]))
        if tag == "script" and "src" not in found:
            self.inline_scripts += 1  # runs from the page itself: loads nothing
        elif tag in {"script", "link", "img", "iframe"} or any(
            k in {"src", "href"} and v and re.match(r"https?:", v) for k, v in attrs
        ):
            self.loads.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "figure":
            self._in_figure -= 1


def test_report_is_self_contained(quickstart: Path) -> None:
    text = (quickstart / "report.html").read_text(encoding="utf-8")
    dom = _Dom()
    dom.feed(text)
    assert dom.loads == []  # no script, stylesheet, image or frame to fetch: opens offline
    assert "@media print" in text


HEADLESS = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]


def _rendered(page: str) -> tuple[str, _Dom]:
    """The page as headless Chromium parsed it: its DOM text, and what _Dom found in it."""
    dom_text = subprocess.run(
        [*HEADLESS, "--dump-dom", page], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    dom = _Dom()
    dom.feed(dom_text)
    return dom_text, dom


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (.ci/run installs it)")
def test_quickstart_report_renders_in_headless_chromium(quickstart: Path, tmp_path: Path) -> None:
    page = (quickstart / "report.html").as_uri()
    _, dom = _rendered(page)
    rows = [json.loads(x) for x in (quickstart / "verdicts.jsonl").read_text().splitlines()]
    challengers = [r["arm"] for r in rows if not r["is_baseline"]]
    assert dom.table_arms == [r["arm"] for r in rows]  # every arm, in the verdict table
    assert dom.sections == challengers  # a section per challenger row
    # the arm-level forest plot, then one figure per scenario
    assert [f.get("data-scenario") for f in dom.figures] == [None, "default"]
    assert dom.svgs_in_figures == 2
    shot = tmp_path / "report.png"
    subprocess.run(
        [*HEADLESS, f"--screenshot={shot}", "--window-size=1200,2400", page],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert shot.stat().st_size > 10_000


def test_report_command_rebuilds_from_records_alone(quickstart: Path) -> None:
    before = (quickstart / "report.html").read_text(encoding="utf-8")
    (quickstart / "report.html").unlink()
    code, out, err = invoke("report", str(quickstart))
    assert code == 0, err
    assert out.strip() == str(quickstart / "report.html")
    assert (quickstart / "report.html").read_text(encoding="utf-8") == before  # deterministic


def test_report_on_a_folder_without_records_is_one_line(tmp_path: Path) -> None:
    code, out, err = invoke("report", str(tmp_path))
    assert code == 2 and out == ""
    assert err.startswith("error: ") and "holds no records" in err and err.count("\n") == 1


def test_report_on_a_damaged_verdict_line_names_it(quickstart: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(quickstart, copy)
    with (copy / "verdicts.jsonl").open("a", encoding="utf-8") as fh:
        fh.write("{not json\n")
    code, _, err = invoke("report", str(copy))
    assert code == 2 and "verdicts.jsonl line 5 is not JSON" in err
    assert not list(copy.glob(".report.html.*.tmp"))  # nothing half-written


def test_no_report_flag(tmp_path: Path) -> None:
    out = tmp_path / "o"
    code, _, err = invoke(
        "run", str(QUICKSTART), "--executor", "local", "--out", str(out), "--no-report"
    )
    assert code == 0, err
    assert not (out / "report.html").exists()


def test_fail_on_confirmed_exits_3_after_writing_everything(tmp_path: Path) -> None:
    out = tmp_path / "o"
    code, _, err = invoke(
        "run", str(QUICKSTART), "--executor", "local", "--out", str(out), "--fail-on", "confirmed"
    )
    assert code == 3
    assert "fail-on: 1 match(es): stale-index: confirmed" in err  # its arm-level verdict
    assert (out / "verdicts.jsonl").exists() and (out / "report.html").exists()


def test_fail_on_passes_when_nothing_matches(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path,
        f"name: calm\nrunner: {TESTS / 'runners.py'}:echo_arm\nreference: 'yes'\nsamples: 8\n"
        "executor: local\narms: [{id: base}, {id: alt, facets: {model: large}}]\n",
    )
    args = ["--fail-on", "confirmed", "--fail-on", "significant"]
    code, _, err = invoke("run", str(cfg), "--out", str(tmp_path / "o"), *args)
    assert code == 0, err
    assert "could not fire" not in err  # 8 samples: the test could have reached alpha


def _small(tmp_path: Path) -> Path:
    # 3 samples: (1/2)^3 = 0.125 > 0.05, so no outcome of the paired test reaches alpha.
    return write_config(
        tmp_path,
        f"name: small\nrunner: {TESTS / 'runners.py'}:echo_arm\nreference: 'yes'\nsamples: 3\n"
        "executor: local\narms: [{id: base}, {id: alt, facets: {model: large}}]\n",
    )


def test_fail_on_significant_says_when_it_could_not_fire(tmp_path: Path) -> None:
    cfg = _small(tmp_path)
    code, _, err = invoke("run", str(cfg), "--out", str(tmp_path / "o"), "--fail-on", "significant")
    assert code == 0, err
    (line,) = [x for x in err.splitlines() if "could not fire" in x]
    assert "1 of 1 challenger tests are underpowered" in line
    assert "at least 5 samples per arm can reach alpha 0.05" in line


def test_fail_on_underpowered_exits_3(tmp_path: Path) -> None:
    cfg = _small(tmp_path)
    code, _, err = invoke(
        "run", str(cfg), "--out", str(tmp_path / "o"), "--fail-on", "underpowered"
    )
    assert code == 3
    assert "fail-on: 1 match(es): alt: underpowered" in err


def test_bisection_report_shows_the_probes(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path,
        f"name: b\nrunner: {TESTS / 'runners.py'}:needs_two_removed\nreference: wrong\n"
        "comparator: exact\nexecutor: local\nbisect: {suspects: [p, x, q, y], max_probes: 12}\n",
    )
    out = tmp_path / "b"
    code, _, err = invoke("bisect", str(cfg), "--out", str(out), "--fail-on", "confirmed")
    assert code == 3, err
    text = (out / "report.html").read_text(encoding="utf-8")
    assert "Bisection: confirmed" in text and "Probes, in order" in text and "<svg" in text
    assert "<li>x, y</li>" in text  # the culprit set
    assert "most common output" in text and "<code>right</code>" in text  # the probes' outputs


def test_ids_with_dollars_and_markup_are_text(tmp_path: Path) -> None:
    # matplotlib would read "$...$" as maths; HTML would run "<script>": both are plain text
    cfg = write_config(
        tmp_path,
        f"name: hostile\nrunner: {TESTS / 'runners.py'}:echo_arm\nreference: 'yes'\n"
        "executor: local\narms:\n  - id: base\n  - id: 'price_$5_$<script>x</script>'\n"
        "    facets: {answer: '<script>alert(1)</script>'}\n",
    )
    code, _, err = invoke("run", str(cfg), "--out", str(tmp_path / "o"), "--fail-on", "confirmed")
    assert code == 3, err  # the report was drawn, then the gate decided
    text = (tmp_path / "o" / "report.html").read_text(encoding="utf-8")
    assert "<script" not in text and "price_$5_$&lt;script&gt;" in text


def test_pooled_results_come_first_in_the_report(tmp_path: Path) -> None:
    def runner(ctx: RunContext) -> str:
        rate = 0.5 if ctx.arm.facets else 0.2
        return (
            "no"
            if random.Random(f"{ctx.scenario.id}/{ctx.seed}/{ctx.arm.id}").random() < rate
            else "yes"
        )

    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        runner,
        samples=12,
        scenarios=[{"id": f"s{i}", "reference": "yes"} for i in range(4)],
        comparator="exact",
        executor="local",
        out=tmp_path / "o",
    )
    (pooled,) = result.summary.pooled
    assert pooled.effect is not None
    text = write_report(tmp_path / "o").read_text(encoding="utf-8")
    assert text.index("<h2>Pooled across scenarios</h2>") < text.index("<h2>Verdicts</h2>")
    e = pooled.effect
    assert f"{e.diff:+.2f} [{e.low:+.2f}, {e.high:+.2f}]" in text
    assert 'data-pooled-arm="alt"' in text and "decide tiers, alternative greater" in text


def _researcher_run(
    tmp_path: Path, scenarios: int, challengers: int = 2, cost: bool = False
) -> Path:
    def runner(ctx: RunContext) -> dict[str, object]:
        rate = 0.6 if ctx.arm.id == "c0" else 0.1
        draw = random.Random(f"{ctx.scenario.id}/{ctx.arm.id}/{ctx.seed}").random()
        answer = "I do not know" if draw < rate else f"It is {ctx.scenario.inputs['answer']}"
        spent = {"cost": {"usd": 0.002, "tokens": 150}} if cost else {}
        return {"output": answer, "manifest": dict(ctx.arm.facets)} | spent

    arms = [{"id": "base", "facets": {"k": 0}}] + [
        {"id": f"c{i}", "facets": {"k": i + 1}} for i in range(challengers)
    ]
    out = tmp_path / "o"
    compare_arms(
        arms,
        runner,
        samples=6,
        scenarios=[
            {
                "id": f"s{i}",
                "inputs": {"question": f"What is {i}?", "answer": str(i)},
                "reference": str(i),
            }
            for i in range(scenarios)
        ],
        comparator="contains",
        executor="local",
        out=out,
        statistics={"decide": "test"},
    )
    return out


def test_the_report_shows_what_a_researcher_reads_first(tmp_path: Path) -> None:
    out = _researcher_run(tmp_path, scenarios=4)
    text = write_report(out).read_text(encoding="utf-8")
    # The verdict per challenger over the question set comes first, with its forest plot (the
    # only one: it replaces the pooled one); then the verdicts at a glance, a matrix of 4
    # scenarios x 2 challengers; then the pooled tests, then the row table.
    order = [
        "<dt>spend</dt><dd>no run reported a cost</dd>",
        "Each challenger over the whole question set",
        'data-arm-verdict="c0"',
        'class="forest arm-forest"',
        "Verdicts at a glance",
        "<h2>Pooled across scenarios</h2>",
        "<h2>Verdicts</h2>",
        ">Scenario s0</h2>",
    ]
    assert [text.index(x) for x in order] == sorted(text.index(x) for x in order)
    assert text.count('class="forest') == 1
    assert text.count('<td class="cell ') == 8
    assert "cell-up" in text  # c0 breaks the answer on every scenario
    # Each scenario: its question, its reference, what the baseline answered, what arms changed to.
    assert "What is 3?" in text and "Reference (declared): <code>3</code>" in text
    assert "The baseline <b>base</b> answered" in text and "It is 2" in text
    assert "Changed the answer to:" in text and "I do not know" in text
    assert "Seeds used: seeds 0..5 (6)" in text
    # An answer-level comparator: no similarity strip, no null band drawn.
    assert "similarity per seed" not in text and "null-band floor" not in text
    summary = json.loads((out / "summary.json").read_text())
    assert f"<dd>{summary['python_version']}</dd>" in text
    assert summary["python_version"] and "<dt>Ray</dt>" in text


@pytest.fixture(scope="module")
def eval_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """300 questions x (baseline + 2 challengers) x 6 seeds, every run reporting a cost."""
    out = _researcher_run(tmp_path_factory.mktemp("evalset"), scenarios=300, cost=True)
    write_report(out)
    return out


def _inline_rows(text: str) -> dict[str, Any]:
    start = text.index('<script type="application/json" id="cf-data">')
    body = text[text.index(">", start) + 1 : text.index("</script>", start)]
    data: dict[str, Any] = json.loads(body)
    return data


def test_an_eval_set_s_report_leads_with_the_arm_level_verdicts(eval_set: Path) -> None:
    text = (eval_set / "report.html").read_text(encoding="utf-8")
    order = [
        "<dt>spend</dt><dd>tokens 810,000, usd 10.80 over 5,400 runs (base tokens 270,000, "
        "usd 3.60; c0 tokens 270,000, usd 3.60; c1 tokens 270,000, usd 3.60)</dd>",
        "Each challenger over the whole question set",
        'data-arm-verdict="c0"',
        'data-arm-verdict="c1"',
        'class="forest arm-forest"',
        '<h2 id="questions">Every question (300 questions, 900 rows)</h2>',
        '<h2 id="notable">',
    ]
    assert [text.index(x) for x in order] == sorted(text.index(x) for x in order)
    assert text.count('class="forest') == 1  # one forest plot for every challenger
    # c0 breaks the answer: confirmed over the question set, with its effect and interval
    c0 = text[text.index('data-arm-verdict="c0"') :]
    c0 = c0[: c0.index("</tr>")]
    assert '<td class="confirmed">confirmed</td><td class="significant">significant</td>' in c0
    assert re.search(r"<td>\+0\.\d{3} \[\+0\.\d{3}, \+0\.\d{3}\] \(\d+%\)</td>", c0)
    assert re.search(
        r"<td>breaks \d+ / fixes \d+ of 300; flips \d+% vs the baseline&#x27;s \d+%</td>", c0
    )


def test_an_eval_set_s_report_has_every_row_and_few_figures(eval_set: Path) -> None:
    text = (eval_set / "report.html").read_text(encoding="utf-8")
    data = _inline_rows(text)
    assert data["questions"] == [f"s{i}" for i in range(300)]  # every question, in order
    rows = [(data["questions"][r[0]], data["words"][r[1]]) for r in data["rows"]]
    assert rows == [(f"s{i}", arm) for i in range(300) for arm in ("base", "c0", "c1")]
    # figures: the forest plot, and one per notable question (at most 10), not one per question
    figures = text.count('<figure class="scenario"')
    assert 0 < figures <= 10 and text.count("<svg") == figures + 1
    notable = {m.question for a in read_summary(eval_set).arms for m in a.notable}
    shown = set(re.findall(r'<figure class="scenario" data-scenario="([^"]+)"', text))
    assert shown <= notable and text.count('<section class="arm"') == 2 * figures
    assert "<h2>Verdicts</h2>" not in text and "Verdicts at a glance" not in text
    dom = _Dom()
    dom.feed(text)
    assert dom.loads == [] and dom.inline_scripts == 2  # the data and the code, both inline
    assert (eval_set / "report.html").stat().st_size < 300_000


def test_an_eval_set_s_report_keeps_hostile_ids_as_text(tmp_path: Path) -> None:
    # Above 20 questions the rows are JSON inside the page: an id cannot close its script.
    hostile = "x</script><script>alert(1)</script>"
    compare_arms(
        [{"id": "base"}, {"id": hostile, "facets": {"x": 1}}],
        lambda ctx: "yes",
        samples=2,
        scenarios=[{"id": f"q{i}", "reference": "yes"} for i in range(21)],
        comparator="contains",
        executor="local",
        out=tmp_path / "o",
    )
    text = write_report(tmp_path / "o").read_text(encoding="utf-8")
    assert text.count("<script") == 2 and "alert(1)</script>" not in text
    assert hostile in _inline_rows(text)["words"]


def test_a_run_directory_from_before_arm_level_verdicts_still_renders(tmp_path: Path) -> None:
    # Summary schema 6: no arms, no spend. The page starts with the per-scenario results and
    # keeps the pooled forest plot, as it did.
    out = _researcher_run(tmp_path, scenarios=4)
    summary = json.loads((out / "summary.json").read_text())
    summary.update(schema_version=6, **summary.pop("execution"))  # flat, as version 6 wrote it
    del summary["arms"], summary["spend"]
    (out / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    (out / "arms.jsonl").unlink()
    text = write_report(out).read_text(encoding="utf-8")
    assert "Each challenger over the whole question set" not in text
    assert "<dt>spend</dt><dd>no run reported a cost</dd>" in text
    assert text.count('<figure class="forest">') == 1
    assert text.index("Verdicts at a glance") < text.index('<figure class="forest">')


def test_a_bisection_report_under_decide_test_shows_each_probe_s_p(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path,
        f"name: b\nrunner: {TESTS / 'runners.py'}:needs_two_removed\nreference: wrong\nsamples: 8\n"
        "comparator: exact\nexecutor: local\n"
        "bisect: {suspects: [p, x, q, y], max_probes: 24, decide: test}\n",
    )
    out = tmp_path / "b"
    code, _, err = invoke("bisect", str(cfg), "--out", str(out))
    assert code == 0, err
    text = (out / "report.html").read_text(encoding="utf-8")
    assert "<th>p (vs baseline)</th>" in text
    assert "Confirmation on fresh seeds" in text and "<td>x, y</td><td>8...15</td>" in text


def test_fail_on_significant_with_no_challenger_says_so() -> None:
    # A sweep needs a challenger, but records read back from elsewhere may hold none.
    from counterfact.orchestrator.drivers.gating.states import cannot_fire

    assert cannot_fire([], [], ["significant"], None) == (
        "fail-on significant: this gate could not fire — the sweep has no challenger"
    )
    assert cannot_fire([], [], ["scenario-significant"], None) == (
        "fail-on scenario-significant: this gate could not fire — the sweep has no challenger"
    )
    assert cannot_fire([], [], ["confirmed"], None) is None


def test_the_report_shows_the_manifest_values_that_differ_from_the_baseline(
    tmp_path: Path,
) -> None:
    # A retrieval agent: the index arm retrieves other passages; both report the same model.
    def runner(ctx: RunContext) -> dict[str, object]:
        passages = ["p3", "p7"] if ctx.arm.id == "new-index" else ["p1", "p2"]
        return {"output": "yes", "manifest": {"passages": passages, "model": "m1"}}

    out = tmp_path / "o"
    compare_arms(
        [{"id": "base"}, {"id": "new-index", "facets": {"index": "v2"}}],
        runner,
        samples=4,
        reference="yes",
        comparator="contains",
        executor="local",
        out=out,
    )
    text = write_report(out).read_text(encoding="utf-8")
    section = text[text.index('data-arm="new-index"') :]
    assert "What the runs reported that differed" in section
    assert (
        "<code>passages</code>: the baseline reported <code>[&quot;p1&quot;, &quot;p2&quot;]"
        "</code> (4 run(s), seeds 0, 1, 2, 3); the arm reported <code>[&quot;p3&quot;, "
        "&quot;p7&quot;]</code>"
    ) in section
    assert "<code>model</code>:" not in section  # the same on both: not a difference


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (.ci/run installs it)")
def test_the_researcher_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    # 4 scenarios x 2 challengers: the matrix, the forest plot, a figure per scenario and a
    # section per challenger row survive a real browser's parse.
    out = _researcher_run(tmp_path, scenarios=4)
    dom_text, dom = _rendered(write_report(out).as_uri())
    scenarios = [f.get("data-scenario") for f in dom.figures if f.get("data-scenario")]
    assert scenarios == ["s0", "s1", "s2", "s3"]
    assert dom.sections == ["c0", "c1"] * 4
    assert dom_text.count('<td class="cell ') == 8 and 'class="forest arm-forest"' in dom_text
    assert dom.loads == []


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (.ci/run installs it)")
def test_an_eval_set_s_report_pages_and_filters_in_headless_chromium(eval_set: Path) -> None:
    page = (eval_set / "report.html").as_uri()
    dom_text, dom = _rendered(page)
    assert dom.table_arms[:6] == ["base", "c0", "c1"] * 2  # the first page, drawn by the script
    assert len(dom.table_arms) == 100 and "rows 1-100 of 900; page 1 of 9" in dom_text
    assert dom.loads == []
    # a link opens it filtered: a whole-cell question id, one arm
    dom_text, dom = _rendered(page + "#q=%22s7%22&arm=c0")
    assert dom.table_arms == ["c0"] and '<tr data-scenario="s7" data-arm="c0">' in dom_text
    assert "rows 1-1 of 1 (filtered from 900)" in dom_text
    dom_text, _ = _rendered(page + "#q=s7")  # part of a cell: s7, s70..s79
    assert "of 33 (filtered from 900)" in dom_text


def test_the_github_actions_example_runs_the_gates_the_docs_describe() -> None:
    # docs/github-actions.yml is copied into users' repositories: it must parse, validate before
    # spending runs, and gate on the exit-3 states (confirmed, underpowered) the README lists.
    import yaml

    workflow = yaml.safe_load((TESTS.parent / "docs" / "github-actions.yml").read_text())
    steps = workflow["jobs"]["sweep"]["steps"]
    runs = [step.get("run", "") for step in steps]
    assert any(r.startswith("counterfact validate") for r in runs)
    (sweep,) = [r for r in runs if r.startswith("counterfact run")]
    assert "--fail-on confirmed" in sweep and "--fail-on underpowered" in sweep
    readme = (TESTS.parent / "README.md").read_text()
    (exit3,) = [line for line in readme.splitlines() if line.startswith("| 3 |")]
    assert "`confirmed`" in exit3 and "`underpowered`" in exit3
    uploads = [step for step in steps if "upload-artifact" in step.get("uses", "")]
    assert uploads and uploads[0].get("if") == "always()"


def test_a_sequential_arm_s_section_says_where_it_stopped(tmp_path: Path) -> None:
    def runner(ctx: RunContext) -> str:
        return "no" if ctx.arm.id == "alt" else "yes"

    out = tmp_path / "o"
    result = compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        runner,
        samples=4,
        reference="yes",
        comparator="exact",
        executor="local",
        sequential={"max_samples": 40, "wave": 4},
        out=out,
    )
    seq = result.row("alt").sequential
    assert seq is not None and seq.stopped_for == "significant"
    text = write_report(out).read_text(encoding="utf-8")
    assert (
        f"Seeds used: seeds 0..{seq.seeds_used - 1} ({seq.seeds_used}); sequential: stopped for "
        f"significant at {seq.seeds_used} of up to 40"
    ) in text


def test_manifest_values_are_compared_whole_and_untracked_keys_are_not_absent(
    tmp_path: Path,
) -> None:
    # The passages share their first 400 characters and differ after: a real difference the
    # page must show (cut, with an ellipsis). The arm also reports 25 keys, more than are
    # tracked: the baseline's keys it did not track are not "reported nothing".
    long = "x" * 400

    def runner(ctx: RunContext) -> dict[str, object]:
        tail = "new" if ctx.arm.id == "alt" else "old"
        manifest: dict[str, object] = {"passages": [long, tail]}
        if ctx.arm.id == "alt":
            manifest = manifest | {f"extra{i:02d}": i for i in range(25)}
        else:
            manifest["model"] = "m1"
        return {"output": "yes", "manifest": manifest}

    out = tmp_path / "o"
    compare_arms(
        [{"id": "base"}, {"id": "alt", "facets": {"x": 1}}],
        runner,
        samples=3,
        reference="yes",
        comparator="contains",
        executor="local",
        out=out,
    )
    data = report_data(out)
    assert ("default", "alt") in data.manifests_partial
    text = write_report(out).read_text(encoding="utf-8")
    section = text[text.index('data-arm="alt"><h3>') :]
    assert "<code>passages</code>: the baseline reported" in section and "…" in section
    assert "<code>model</code>" not in section  # untracked on the arm's side: not a difference


def test_manifest_differences_without_baseline_manifests_is_one_line() -> None:
    from counterfact.verdicts.report.data import Output
    from counterfact.verdicts.report.scenario import manifest_differences

    arm = {f"k{i}": [Output("1", 3, (0, 1, 2))] for i in range(12)}
    assert manifest_differences({}, arm) == (
        "<p>The baseline's runs reported no manifest to compare with.</p>"
    )
    assert manifest_differences({}, {}) == ""
    hostile = {"<b>k</b>": [Output("<script>", 1, (0,))]}
    html = manifest_differences({"<b>k</b>": [Output("1", 1, (0,))]}, hostile)
    assert "<script>" not in html and "&lt;script&gt;" in html and "&lt;b&gt;k" in html
