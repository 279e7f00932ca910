"""counterfact view (issue 29): the routes over real run directories, on a real uvicorn server at
127.0.0.1, with the real httpx client; read-only, nothing outside the served folder."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import httpx
import pytest

from counterfact.records import read_arms, read_verdicts

from ...viewsweeps import (
    FLIPS,
    HOSTILE_ARM,
    HOSTILE_QUESTION,
    HUGE,
    QUESTIONS,
    Viewer,
    live_state,
    make_folder,
    write_live,
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_folder(tmp_path_factory.mktemp("view") / "runs")


@pytest.fixture(scope="module")
def viewer(runs: Path) -> Iterator[Viewer]:
    with Viewer(runs) as served:
        yield served


@pytest.fixture
def client(viewer: Viewer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=viewer.url, timeout=30) as c:
        yield c


def _text(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", html))


def test_the_list_shows_every_sweep_with_its_status_and_arm_verdicts(
    client: httpx.Client, runs: Path
) -> None:
    reply = client.get("/")
    assert reply.status_code == 200
    assert "text/html" in reply.headers["content-type"]
    for name in ("before", "after", "hostile"):
        assert f'href="/sweep?run={name}"' in reply.text
        for arm in read_arms(runs / name):
            assert f"{arm.arm}: {arm.verdict}" in _text(reply.text)
    row = reply.text.split('href="/sweep?run=running"')[1].split("</tr>")[0]
    assert "running" in row and 'runs <span data-live="runs">10 of 48</span>' in row


def test_a_finished_sweep_page_lists_each_arm_verdict_and_links_its_questions(
    client: httpx.Client, runs: Path
) -> None:
    page = client.get("/sweep", params={"run": "after"}).text
    for arm in read_arms(runs / "after"):
        assert f'href="/arm?run=after&amp;arm={arm.arm}"' in page
        assert f'<span class="{arm.verdict}">{arm.verdict}</span>' in page
    assert "complete" in page and "data-live-url" not in page  # no live.json: no panel


def test_an_arm_page_lists_its_verdict_per_question(client: httpx.Client, runs: Path) -> None:
    page = client.get("/arm", params={"run": "after", "arm": "alt"}).text
    rows = {v.scenario: v.verdict for v in read_verdicts(runs / "after") if v.arm == "alt"}
    for q, verdict in rows.items():
        cell = page.split(f">{q}</a></td>")[1].split("</td>")[0]
        assert verdict in cell
    assert f"rows 1-{len(QUESTIONS)} of {len(QUESTIONS)}" in page
    confirmed = client.get("/arm", params={"run": "after", "arm": "alt", "verdict": "confirmed"})
    assert f"of {len(FLIPS['after'])};" in confirmed.text


def test_a_question_page_shows_baseline_and_arm_outputs_per_seed(client: httpx.Client) -> None:
    page = client.get("/question", params={"run": "after", "arm": "alt", "q": "q1"}).text
    assert "<th>baseline: base</th><th>alt</th>" in page
    body = page.split("<tbody>")[1]
    seeds = re.findall(r"<tr><td>(\d+)</td><td>(.*?)</td><td>(.*?)</td></tr>", body, re.S)
    assert [int(s) for s, _, _ in seeds] == list(range(6))
    for _, base, arm in seeds:
        assert '<pre class="out">yes</pre>' in base
        assert '<strong class="confirmed">flipped</strong><pre class="out">no</pre>' in arm


def test_a_running_sweep_is_listed_from_its_runs_and_live_state(client: httpx.Client) -> None:
    page = client.get("/sweep", params={"run": "running"}).text
    assert 'data-live-url="/api/live?run=running"' in page
    assert '<dd data-live="runs">10 of 48 (21%)</dd>' in page
    assert '<dd data-live="waited_429">2</dd>' in page
    assert '<dd data-live="concurrency">6 of at most 16</dd>' in page
    assert '<dd data-live="spend">usd 0.25 of 10</dd>' in page
    assert "No arm-level verdicts yet." in page
    live = client.get("/api/live", params={"run": "running"}).json()
    assert live["status"] == "running" and not live["ended"]
    assert live["fields"]["runs"] == "10 of 48 (21%)" and live["state"]["waited_429"] == 2
    # the torn last line is not a run: 10 complete lines, every one of arm base or alt
    arm = client.get("/arm", params={"run": "running", "arm": "base"}).text
    assert "No verdicts yet" in arm


def test_the_live_endpoint_follows_the_file(client: httpx.Client, runs: Path) -> None:
    write_live(runs / "running", live_state(runs_done=30, waited_429=7))
    try:
        live = client.get("/api/live", params={"run": "running"}).json()
        assert live["fields"]["runs"] == "30 of 48 (62%)" and live["fields"]["waited_429"] == "7"
    finally:
        write_live(runs / "running", live_state(runs_done=10))
    stale = live_state(runs_done=10, updated_at="2026-01-01T00:00:00+00:00")
    write_live(runs / "running", stale)
    try:
        fields = client.get("/api/live", params={"run": "running"}).json()["fields"]
        assert "the sweep may have stopped" in fields["status"]
    finally:
        write_live(runs / "running", live_state(runs_done=10))
    # a finished sweep keeps the engine's last live.json: served, saying it finished
    done = client.get("/api/live", params={"run": "after"})
    assert done.status_code == 200 and "finished" in done.json()["fields"]["status"]
    assert client.get("/api/live", params={"run": "no-such-run"}).status_code == 404


def test_two_runs_compared_name_the_arms_and_questions_that_changed(
    client: httpx.Client,
) -> None:
    page = client.get("/compare", params={"a": "before", "b": "after"}).text
    arms = page.split('class="arm-changes"')[1].split("</table>")[0]
    assert re.search(r">alt</a></td><td>.*not-confirmed.*</td><td>.*>confirmed<.*changed", arms)
    assert re.search(r">same</a></td>.*<td>same</td></tr>", arms)
    only_same = client.get("/compare", params={"a": "before", "b": "after", "arm": "same"})
    assert "0 question verdict(s) changed for arm same; 8 the same." in only_same.text
    changed = re.findall(r"<tr><td>(q\d)</td><td>(\w+)</td>", page.split('class="q-changes"')[1])
    assert changed == [(q, "alt") for q in sorted(FLIPS["after"] - FLIPS["before"])]
    assert "5 question verdict(s) changed; 11 the same." in page


@pytest.mark.parametrize(
    "run",
    ["..", "../..", "../../etc", "/etc", "running/../../..", "before/..", "./before", "%2e%2e"],
)
def test_no_path_outside_the_served_folder_is_reachable(client: httpx.Client, run: str) -> None:
    for route in ("/sweep", "/report", "/arm", "/api/live"):
        reply = client.get(route, params={"run": run, "arm": "alt"})
        assert reply.status_code == 404, (route, run)
    assert client.get("/compare", params={"a": run, "b": "after"}).status_code == 404


def test_raw_traversal_in_the_path_is_not_a_file(client: httpx.Client, runs: Path) -> None:
    for raw in ("/../../etc/passwd", "/static/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd"):
        reply = client.get(raw)
        assert reply.status_code == 404 and "root:" not in reply.text


def test_a_symlink_out_of_the_folder_is_not_served(tmp_path: Path, runs: Path) -> None:
    served = tmp_path / "served"
    served.mkdir()
    (served / "outside").symlink_to(runs / "after", target_is_directory=True)
    (served / "mine").mkdir()
    (served / "mine" / "summary.json").symlink_to(runs / "after" / "summary.json")
    with Viewer(served) as v, httpx.Client(base_url=v.url) as c:
        assert 'href="/sweep?run=outside"' not in c.get("/").text
        assert c.get("/sweep", params={"run": "outside"}).status_code == 404
        page = c.get("/sweep", params={"run": "mine"}).text  # listed, its link refused
        assert "unreadable: summary.json cannot be opened" in page


def test_only_get_is_served(client: httpx.Client) -> None:
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        assert client.request(method, "/sweep", params={"run": "after"}).status_code == 405


def test_a_foreign_host_header_is_refused(client: httpx.Client) -> None:
    # DNS rebinding: a page of evil.example resolved to 127.0.0.1 sends its own Host
    assert client.get("/", headers={"host": "evil.example"}).status_code == 400
    assert client.get("/", headers={"host": "localhost:1"}).status_code == 200


def test_every_page_forbids_other_scripts_and_framing(client: httpx.Client) -> None:
    for path in ("/", "/sweep?run=after", "/nowhere"):
        headers = client.get(path).headers
        assert "script-src 'self'" in headers["content-security-policy"]
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["x-frame-options"] == "DENY"
    report = client.get("/report", params={"run": "after"})
    assert report.status_code == 200 and "<svg" in report.text
    assert report.headers["content-security-policy"].startswith("sandbox allow-scripts")


def test_hostile_ids_and_outputs_are_escaped_text(client: httpx.Client) -> None:
    page = client.get(
        "/question", params={"run": "hostile", "arm": HOSTILE_ARM, "q": HOSTILE_QUESTION}
    ).text
    assert page.count("<script") == 0  # no script at all on this page (not live)
    assert "<img" not in page and "<h1>injected" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&quot;&gt;&lt;img src=x onerror=window.__pwned=&quot;output&quot;&gt;" in page
    assert (
        'esc<span class="ctl">\\x1b</span>[31mred<span class="ctl">\\x00</span>nul'
        '<span class="ctl">\\u202e</span>rtl<span class="ctl">\\x07</span>bell'
    ) in page
    assert f"… {len(HUGE) - 10_000:,} more characters" in page
    assert len(page) < 200_000  # the huge output is cut on the page
    assert "&lt;script&gt;alert(&#x27;transcript&#x27;)&lt;/script&gt;" in page  # transcript
    whole = client.get(
        "/output", params={"run": "hostile", "arm": HOSTILE_ARM, "q": HOSTILE_QUESTION, "seed": "2"}
    )
    assert whole.text == HUGE and whole.headers["content-type"].startswith("text/plain")


def test_a_hostile_id_submits_unchanged_from_the_filter_form(client: httpx.Client) -> None:
    page = client.get("/arm", params={"run": "hostile", "arm": HOSTILE_ARM}).text
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', page))
    assert {k: unescape(v) for k, v in fields.items()} == {"run": "hostile", "arm": HOSTILE_ARM}
    link = re.search(r'<a href="(/question\?[^"]+)">', page)
    assert link is not None
    assert client.get(unescape(link.group(1))).status_code == 200
    assert "\u202e" not in page.split("<form")[0]  # shown as an escape, never sent


def test_a_damaged_summary_is_said_on_the_page(tmp_path: Path, runs: Path) -> None:
    import shutil

    copy = tmp_path / "served" / "copy"
    shutil.copytree(runs / "after", copy)
    (copy / "summary.json").write_text("{not json", encoding="utf-8")
    with Viewer(tmp_path / "served") as v, httpx.Client(base_url=v.url) as c:
        listing = c.get("/")
        assert (
            listing.status_code == 200
            and "unreadable: summary.json is not valid JSON" in listing.text
        )
        page = c.get("/sweep", params={"run": "copy"})
        assert page.status_code == 200 and "unreadable: summary.json" in page.text


def test_a_verdict_line_the_index_reads_but_the_record_refuses_is_said(
    tmp_path: Path, runs: Path
) -> None:
    import json
    import shutil

    copy = tmp_path / "served" / "copy"
    shutil.copytree(runs / "after", copy)
    path = copy / "verdicts.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    hit = next(r for r in rows if not r["is_baseline"])
    hit["claim"] = 5  # the index reads the headline fields only; the record wants a string
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with Viewer(tmp_path / "served") as v, httpx.Client(base_url=v.url) as c:
        page = c.get("/question", params={"run": "copy", "arm": hit["arm"], "q": hit["scenario"]})
    assert page.status_code == 200
    assert "unreadable: verdicts.jsonl: the row of question" in page.text
    assert "is not a valid verdict record" in page.text


def test_unknown_arms_and_questions_are_404(client: httpx.Client) -> None:
    assert client.get("/arm", params={"run": "after", "arm": "nope"}).status_code == 404
    assert (
        client.get("/question", params={"run": "after", "arm": "alt", "q": "nope"}).status_code
        == 404
    )
    assert (
        client.get(
            "/output", params={"run": "after", "arm": "alt", "q": "q1", "seed": "99"}
        ).status_code
        == 404
    )
    assert (
        client.get(
            "/output", params={"run": "after", "arm": "alt", "q": "q1", "seed": "-1"}
        ).status_code
        == 404
    )


def test_the_live_json_is_the_model_s(client: httpx.Client, runs: Path) -> None:
    state = json.loads((runs / "running" / "live.json").read_text())
    assert client.get("/api/live", params={"run": "running"}).json()["state"] == state


def test_a_sweep_started_after_the_viewer_appears(tmp_path: Path) -> None:
    import time

    served = tmp_path / "served"
    served.mkdir()
    with Viewer(served) as v, httpx.Client(base_url=v.url) as c:
        assert "No run directory in" in c.get("/").text
        (served / "later").mkdir()
        write_live(served / "later", live_state())
        time.sleep(1.1)  # the folder is searched again at most once a second
        assert 'href="/sweep?run=later"' in c.get("/").text
        assert c.get("/sweep", params={"run": "later"}).status_code == 200
