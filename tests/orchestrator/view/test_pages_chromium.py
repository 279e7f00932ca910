"""counterfact view (issue 29) in a real headless Chromium: every arm's verdict on the list, the
live counts changing without a reload while live.json is rewritten, arm -> question -> outputs
side by side, a two-run comparison, and hostile ids and outputs that stay text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest

from counterfact.records import read_arms, read_verdicts

from ...chromium import CHROMIUM, Browser
from ...viewsweeps import (
    FLIPS,
    HOSTILE_ARM,
    HOSTILE_OUTPUTS,
    HOSTILE_QUESTION,
    HUGE,
    Viewer,
    live_state,
    make_folder,
    write_live,
)

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium on this machine (.ci/run installs it)"
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_folder(tmp_path_factory.mktemp("view") / "runs")


@pytest.fixture(scope="module")
def viewer(runs: Path) -> Iterator[Viewer]:
    with Viewer(runs) as served:
        yield served


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser() as b:
        b.call(
            "Page.addScriptToEvaluateOnNewDocument",
            {"source": "window.alert = function (m) { (window.__alerts ||= []).push(m); };"},
            session=True,
        )
        yield b


def _url(viewer: Viewer, path: str, **params: str) -> str:
    return f"{viewer.url}{path}?{urlencode(params)}" if params else f"{viewer.url}{path}"


def test_the_list_shows_every_arm_s_verdict(viewer: Viewer, browser: Browser, runs: Path) -> None:
    browser.open(_url(viewer, "/"))
    rows = browser.js(
        "[...document.querySelectorAll('table.runs tbody tr')].map(r => "
        "[...r.cells].map(c => c.innerText))"
    )
    by_dir = {r[0]: r for r in rows}
    assert set(by_dir) == {"after", "before", "hostile", "running"}
    for name in ("before", "after", "hostile"):
        shown = by_dir[name][3].splitlines()
        assert shown == [f"{a.arm}: {a.verdict}" for a in read_arms(runs / name)]
        assert by_dir[name][2] == "complete"
    assert by_dir["running"][2].startswith("running\nruns 10 of 48")


def test_the_live_counts_change_without_a_reload(
    viewer: Viewer, browser: Browser, runs: Path
) -> None:
    running = runs / "running"
    write_live(running, live_state(runs_done=10))
    try:
        browser.open(_url(viewer, "/sweep", run="running"))
        field = "document.querySelector('[data-live=\"{}\"]').textContent"
        assert browser.js(field.format("runs")) == "10 of 48 (21%)"
        browser.js("window.__same_page = 'yes'")  # a reload would lose it
        polls = browser.wait_for("Number(document.querySelector('.live-panel').dataset.polls)")
        write_live(running, live_state(runs_done=30, in_flight=8, waited_429=9, concurrency=3))
        browser.wait_for(f"{field.format('runs')} === '30 of 48 (62%)'")
        assert browser.js(field.format("waited_429")) == "9"
        assert browser.js(field.format("in_flight")) == "8"
        assert browser.js(field.format("concurrency")) == "3 of at most 16"
        assert browser.js("document.querySelector('progress').value") == pytest.approx(30 / 48)
        assert browser.js("window.__same_page") == "yes"
        assert browser.js("Number(document.querySelector('.live-panel').dataset.polls)") > polls
        write_live(running, live_state(runs_done=48, in_flight=0, status="finished", eta_s=0))
        note = browser.wait_for(
            "(e => !e.hidden && e.textContent)(document.querySelector('[data-live=\"note\"]'))"
        )
        assert "reload the page for its verdicts" in note
        assert browser.js(field.format("status")) == "finished"
        assert browser.js("window.__same_page") == "yes"
    finally:
        write_live(running, live_state(runs_done=10))


def test_arm_to_question_to_outputs_side_by_side(
    viewer: Viewer, browser: Browser, runs: Path
) -> None:
    browser.open(_url(viewer, "/sweep", run="after"))
    arms = browser.js(
        "[...document.querySelectorAll('table.arms tbody tr td:first-child a')].map(a => a.href)"
    )
    assert len(arms) == 2
    browser.open(arms[0])  # alt: its questions, each with its verdict
    rows = browser.js(
        "[...document.querySelectorAll('table.questions tbody tr')].map(r => "
        "[r.cells[0].innerText, r.cells[1].innerText, r.cells[0].querySelector('a').href])"
    )
    expected = {v.scenario: v.verdict for v in read_verdicts(runs / "after") if v.arm == "alt"}
    assert {q: verdict for q, verdict, _ in rows} == expected
    browser.open(next(link for q, _, link in rows if q == "q1"))
    table = browser.js(
        "[...document.querySelectorAll('table.side tr')].map(r => "
        "[...r.cells].map(c => c.querySelector('pre') ? c.querySelector('pre').innerText "
        ": c.innerText))"
    )
    assert table[0] == ["seed", "baseline: base", "alt"]
    assert table[1:] == [[str(seed), "yes", "no"] for seed in range(6)]
    assert browser.js("document.querySelectorAll('table.side strong.confirmed').length") == 6


def test_two_runs_compared_show_the_changed_verdicts(viewer: Viewer, browser: Browser) -> None:
    browser.open(_url(viewer, "/"))
    # the list's compare form, filled in and submitted as a user would
    browser.js(
        "document.querySelector('select[name=a]').value = 'before';"
        "document.querySelector('select[name=b]').value = 'after';"
        "document.querySelector('form.filter').submit()"
    )
    browser.wait_for("location.pathname === '/compare' && document.readyState === 'complete'")
    arms = browser.js(
        "[...document.querySelectorAll('table.arm-changes tbody tr')].map(r => "
        "[...r.cells].map(c => c.innerText))"
    )
    assert arms == [
        ["alt", "not-confirmed", "confirmed", "changed"],
        ["same", "not-confirmed", "not-confirmed", "same"],
    ]
    changed = browser.js(
        "[...document.querySelectorAll('table.q-changes tbody tr')].map(r => "
        "[...r.cells].map(c => c.innerText))"
    )
    moved = sorted(FLIPS["after"] - FLIPS["before"])
    assert changed == [[q, "alt", "not-confirmed", "confirmed"] for q in moved]
    assert "5 question verdict(s) changed" in browser.js("document.body.innerText")


def test_hostile_ids_and_outputs_render_as_text(viewer: Viewer, browser: Browser) -> None:
    for path, params in (
        ("/", {}),
        ("/sweep", {"run": "hostile"}),
        ("/arm", {"run": "hostile", "arm": HOSTILE_ARM}),
        ("/question", {"run": "hostile", "arm": HOSTILE_ARM, "q": HOSTILE_QUESTION}),
    ):
        browser.open(_url(viewer, path, **params))
        assert browser.js("typeof window.__pwned") == "undefined", path
        assert browser.js("window.__alerts === undefined"), path
        assert browser.js("document.querySelectorAll('img, iframe, object').length") == 0, path
        scripts = browser.js("[...document.scripts].map(s => s.src)")
        assert all(s.endswith("/static/live.js") for s in scripts), path
        text = browser.js("document.body.innerText")
        assert HOSTILE_ARM in text, path
    assert browser.dialogs() == []
    # the ids survive the round trip through links and forms: the arm page's filter, submitted,
    # and its question link, followed, name the same arm and question
    browser.open(_url(viewer, "/arm", run="hostile", arm=HOSTILE_ARM))
    browser.js("document.querySelector('form.filter').submit()")
    browser.wait_for("location.search.includes('verdict=') && document.readyState === 'complete'")
    assert browser.js("document.querySelectorAll('table.questions tbody tr').length") == 1
    browser.js("document.querySelector('table.questions a').click()")
    browser.wait_for("location.pathname === '/question' && document.readyState === 'complete'")
    shown = "q<img src=x onerror=window.__pwned='question'>\\u202e\\x1b[1m&amp;"
    assert browser.js("document.querySelector('h1').innerText") == f"{shown} · {HOSTILE_ARM}"
    assert browser.js("typeof window.__pwned") == "undefined"
    cells = browser.js(
        "[...document.querySelectorAll('table.side tbody tr')].map(r => "
        "r.cells[2].querySelector('pre').innerText)"
    )
    assert cells[0] == HOSTILE_OUTPUTS[0] and cells[1] == HOSTILE_OUTPUTS[1]
    # cut, marked with its length (issue 45), with a link to the whole output
    assert cells[2] == HUGE[:10_000] + f" … (truncated, {len(HUGE):,} chars)"
    assert cells[3] == "esc\\x1b[31mred\\x00nul\\u202ertl\\x07bell"  # controls shown, not sent
    assert cells[4] == HOSTILE_OUTPUTS[4]
    assert browser.js("document.querySelectorAll('h1').length") == 1
    transcript = browser.js(
        "document.querySelector('table.side tbody td:nth-child(3) details[open]').innerText"
    )
    assert transcript.startswith("transcript (3 messages)")
    assert "<script>alert('transcript')</script>" in transcript
    whole = browser.js(
        "[...document.querySelectorAll('a')].find(a => a.textContent === 'the whole output').href"
    )
    browser.open(whole)
    assert browser.js("document.body.innerText.length") == len(HUGE)


def test_a_hostile_live_state_stays_text(viewer: Viewer, browser: Browser, runs: Path) -> None:
    running = runs / "running"
    try:
        write_live(running, live_state(sweep="<img src=x onerror=window.__pwned=1>"))
        browser.open(_url(viewer, "/sweep", run="running"))
        write_live(running, live_state(spend={"<b>usd</b>": 1.0}, runs_done=11))
        browser.wait_for(
            "document.querySelector('[data-live=\"runs\"]').textContent.startsWith('11 of')"
        )
        spend = browser.js("document.querySelector('[data-live=\"spend\"]').textContent")
        assert spend == "<b>usd</b> 1; usd 0 of 10"
        assert browser.js("document.querySelectorAll('img, b').length") == 0
        assert browser.js("typeof window.__pwned") == "undefined"
        assert json.loads((running / "live.json").read_text())["runs_done"] == 11
    finally:
        write_live(running, live_state(runs_done=10))
