"""``counterfact blame``: a recorded call in, the context parts that made its answer out, against
a loopback stand-in model through the real ``openai`` client (issue 38)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.chromium import CHROMIUM, Browser
from tests.context_model import RIGHT, WRONG, context_model, passages, recorded_call
from tests.helpers import invoke
from tests.standin import StandIn

PLANTED = "Passage 5: the capital moved to Sydney in 2021."
TWIN_A = "Passage 2: the seat of government is now Sydney."
TWIN_B = "Passage 6: Sydney hosts parliament since the move."


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "none")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def api_one() -> Iterator[StandIn]:
    with StandIn(median_s=0.001, p95_s=0.003, answer=context_model(["moved to Sydney"])) as api:
        yield api


def _write(tmp_path: Path, call: dict[str, Any], name: str = "call.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(call), encoding="utf-8")
    return path


def _blame(api: StandIn, call: Path, out: Path, *more: str) -> tuple[int, str, str]:
    return invoke("blame", str(call), "--base-url", api.base_url, "--out", str(out), *more)


def test_one_planted_passage_is_found_and_shown_with_its_text(
    tmp_path: Path, api_one: StandIn
) -> None:
    call = _write(tmp_path, recorded_call(passages(12, {5: PLANTED})))
    code, out, err = _blame(api_one, call, tmp_path / "out", "--no-report")
    assert code == 0, err
    assert "confirmed (culprits-found)" in out
    assert "culprit set 1: {m1.p5}" in out
    assert "the capital moved to Sydney in 2021" in out  # the part's text, not only its id
    record = json.loads((tmp_path / "out" / "blame.json").read_text())
    assert record["culprits"] == [["m1.p5"]]
    parts = {p["id"]: p for p in record["parts"]}
    assert parts["m1.p5"]["text"] == PLANTED and parts["m1.p5"]["suspect"]
    assert not parts["m1.p12"]["suspect"]  # the question is never a suspect
    assert record["replay"] == {"reproduced": 2, "seeds": 2, "recorded_answer": WRONG}
    assert record["decide"] == "majority" and record["seeds_vary"] is False
    # the lexical prior put the passage that names Sydney first: found in few probes
    assert record["rank"]["order"][0] == "m1.p5"
    assert record["probes_executed"] < 12  # leave-one-out would need 13 with its baseline


def test_the_manifest_lists_the_parts_sent_so_a_removal_is_proven(
    tmp_path: Path, api_one: StandIn
) -> None:
    call = _write(tmp_path, recorded_call(passages(6, {5: PLANTED})))
    code, _, err = _blame(api_one, call, tmp_path / "out", "--no-report")
    assert code == 0, err
    runs = [json.loads(x) for x in (tmp_path / "out" / "runs.jsonl").read_text().splitlines()]
    probe = next(r for r in runs if r["arm"] == 'ablate:["m1.p5"]')
    assert "m1.p5" not in probe["manifest"]["parts"]
    assert "m1.p4" in probe["manifest"]["parts"]
    sent = [b for b in api_one.stats.bodies if PLANTED not in json.dumps(b)]
    assert sent, "no request went out without the planted passage"


def test_two_passages_that_only_together_cause_it_are_one_minimal_set(tmp_path: Path) -> None:
    """Either passage alone makes the answer wrong: only removing both changes it."""
    model = context_model(["seat of government is now Sydney", "parliament since"])
    with StandIn(median_s=0.001, p95_s=0.003, answer=model) as api:
        call = _write(tmp_path, recorded_call(passages(10, {2: TWIN_A, 6: TWIN_B})))
        code, out, err = _blame(api, call, tmp_path / "out", "--no-report")
    assert code == 0, err
    record = json.loads((tmp_path / "out" / "blame.json").read_text())
    assert record["culprits"] == [["m1.p2", "m1.p6"]], out


def test_a_sampled_model_is_blamed_by_a_paired_test_not_its_noise(tmp_path: Path) -> None:
    """Temperature 0.7 with 10% of answers flipped by sampling: decide: test on 12 seeds (a
    paired test per probe, the set confirmed on fresh seeds); the planted passage is claimed and
    nothing else."""
    model = context_model(["moved to Sydney"], noise=0.1)
    with StandIn(median_s=0.001, p95_s=0.003, answer=model) as api:
        call = _write(tmp_path, recorded_call(passages(8, {3: PLANTED}), temperature=0.7))
        code, out, err = _blame(api, call, tmp_path / "out", "--no-report", "--samples", "12")
    assert code == 0, err
    record = json.loads((tmp_path / "out" / "blame.json").read_text())
    assert record["decide"] == "test"
    assert record["culprits"] == [["m1.p3"]], out
    assert "p " in out  # the effect carries its test
    # a sampled call's probes stop once their other seeds cannot change them (stop_early)
    assert record["stop_early"] is True
    stopped = [p for p in record["probes"] if p["decided_early"]]
    assert stopped and all(p["samples"] < 12 for p in stopped)


def test_a_wrong_answer_that_comes_from_the_model_blames_no_part(tmp_path: Path) -> None:
    """No planted passage: the model answers Sydney whatever the context holds."""
    with StandIn(median_s=0.001, p95_s=0.003, answer=context_model([])) as api:
        call = _write(tmp_path, recorded_call(passages(8, {})))
        code, out, err = _blame(api, call, tmp_path / "out", "--no-report")
    assert code == 0, err
    record = json.loads((tmp_path / "out" / "blame.json").read_text())
    assert record["culprits"] == [] and record["verdict"] == "not-reproducible", out


def test_expect_blames_the_part_whose_removal_makes_the_answer_right(
    tmp_path: Path, api_one: StandIn
) -> None:
    call = _write(tmp_path, recorded_call(passages(8, {4: PLANTED})))
    code, out, err = _blame(api_one, call, tmp_path / "out", "--no-report", "--expect", "Canberra")
    assert code == 0, err
    assert "made the answer right" in out
    record = json.loads((tmp_path / "out" / "blame.json").read_text())
    assert record["culprits"] == [["m1.p4"]] and record["expect"] == "Canberra"


def test_a_replay_that_does_not_give_the_recorded_answer_stops_before_the_search(
    tmp_path: Path, api_one: StandIn
) -> None:
    """The recorded answer was Sydney, but the server's model answers Canberra here."""
    call = _write(tmp_path, recorded_call(passages(6, {})))  # nothing planted: it says Canberra
    code, out, err = _blame(api_one, call, tmp_path / "out", "--no-report")
    assert code == 0, err
    assert "the replay gives the recorded answer on 0 of 2 seeds" in out
    record = json.loads((tmp_path / "out" / "blame.json").read_text())
    assert record["reason"] == "unstable-baseline" and record["probes_executed"] == 1


def test_a_resumed_blame_reads_its_runs_back_and_calls_nothing(
    tmp_path: Path, api_one: StandIn
) -> None:
    call = _write(tmp_path, recorded_call(passages(8, {5: PLANTED})))
    assert _blame(api_one, call, tmp_path / "out", "--no-report")[0] == 0
    served = api_one.stats.served
    code, out, err = _blame(api_one, call, tmp_path / "out", "--no-report")
    assert code == 0, err
    assert api_one.stats.served == served + 0  # the model list is not a chat call
    assert "0 model calls now" in out


def test_an_otlp_span_is_a_call(tmp_path: Path, api_one: StandIn) -> None:
    recorded = recorded_call(passages(6, {1: PLANTED}))
    user = recorded["request"]["messages"][1]["content"]
    attrs = {
        "gen_ai.request.model": {"stringValue": "stand-in"},
        "gen_ai.request.temperature": {"doubleValue": 0.0},
        "gen_ai.system_instructions": {
            "stringValue": json.dumps([{"type": "text", "content": "You answer."}])
        },
        "gen_ai.input.messages": {
            "stringValue": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": user}]}]
            )
        },
        "gen_ai.output.messages": {
            "stringValue": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": WRONG}]}]
            )
        },
    }
    span = {
        "spanId": "a1b2c3",
        "name": "chat stand-in",
        "attributes": [{"key": k, "value": v} for k, v in attrs.items()],
    }
    other = {"spanId": "ffff", "name": "http", "attributes": []}
    export = {"resourceSpans": [{"scopeSpans": [{"spans": [other, span]}]}]}
    path = _write(tmp_path, export, "trace.json")
    code, out, err = _blame(api_one, path, tmp_path / "out", "--no-report")
    assert code == 0, err
    assert "blame 'a1b2c3'" in out and "{m1.p1}" in out


@pytest.mark.parametrize(
    ("call", "flags", "words"),
    [
        ({"model": "stand-in", "messages": [{"role": "system", "content": "x"}]}, (), "no user"),
        ({"request": {"model": "m", "messages": []}, "status": 500}, (), "status 500"),
        ({"resourceSpans": []}, (), "no span carries gen_ai.input.messages"),
        (recorded_call(passages(4, {})), ("--keep", "m1.p9"), "'m1.p9'"),
        (recorded_call(passages(4, {})), ("--suspects", "m7"), "'m7' is no part"),
        (
            {"model": "stand-in", "messages": [{"role": "user", "content": "A fact.\n\nWhy?"}]},
            (),
            "nothing to search between",
        ),
        (recorded_call(passages(4, {})), ("--model", "absent-model"), "does not serve model"),
        ({"messages": [{"role": "user", "content": "A.\n\nB.\n\nQ?"}]}, (), "CALL: "),
        (recorded_call(passages(4, {})), ("--keep", "m1.p9"), "error: --keep: 'm1.p9'"),
    ],
)
def test_bad_input_is_one_line_before_anything_is_sent(
    tmp_path: Path, api_one: StandIn, call: dict[str, Any], flags: tuple[str, ...], words: str
) -> None:
    path = _write(tmp_path, call)
    code, _, err = _blame(api_one, path, tmp_path / "out", *flags)
    assert code == 2, err
    lines = [x for x in err.splitlines() if x.startswith("error:")]
    assert len(lines) == 1 and words in lines[0], err
    assert api_one.stats.served == 0
    assert not (tmp_path / "out").exists()


def test_a_server_that_is_down_is_one_line(tmp_path: Path) -> None:
    path = _write(tmp_path, recorded_call(passages(4, {})))
    code, _, err = invoke(
        "blame", str(path), "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "o")
    )
    assert code == 2 and "does not answer" in err, err
    assert not (tmp_path / "o").exists()


def test_right_answers_are_not_blamed_either(tmp_path: Path, api_one: StandIn) -> None:
    """A call whose recorded answer was right: removing the filler changes nothing."""
    call = _write(tmp_path, recorded_call(passages(6, {}), answer=RIGHT))
    code, out, err = _blame(api_one, call, tmp_path / "out", "--no-report")
    assert code == 0, err
    assert json.loads((tmp_path / "out" / "blame.json").read_text())["culprits"] == [], out


PARTS_IGNORED = """
from counterfact import RunResult

def run(ctx):
    return RunResult(output="Sydney", manifest={"parts": ["m0.p0", "m0.p1", "m0.p2"]})
"""


def test_an_arm_whose_manifest_still_lists_a_removed_part_is_not_judged(tmp_path: Path) -> None:
    """A runner that reports the parts it sent but ignores the ablation: the manifest check
    refutes the removal, so the arm is inconclusive (arm-not-applied), not 'no effect'."""
    from counterfact import compare_arms

    (tmp_path / "agent.py").write_text(PARTS_IGNORED)
    result = compare_arms(
        [{"id": "base"}, {"id": "cut", "ablations": ["m0.p1"]}],
        str(tmp_path / "agent.py") + ":run",
        samples=2,
        reference="Sydney",
        comparator="contains",
        executor="local",
    )
    row = result.row("cut")
    assert (row.verdict, row.reason) == ("inconclusive", "arm-not-applied")


def test_a_chat_arm_that_removes_a_part_is_proven_by_its_manifest(
    tmp_path: Path, api_one: StandIn
) -> None:
    from counterfact import compare_arms

    text = "\n\n".join(passages(4, {2: PLANTED}))
    result = compare_arms(
        [{"id": "all"}, {"id": "cut", "ablations": ["m1.p2"]}],
        {
            "kind": "chat",
            "model": "stand-in",
            "base_url": api_one.base_url,
            "temperature": 0,
            "system": "Answer.",
            "prompt": "{passages}\n\nWhat is the capital?",
        },
        samples=2,
        scenarios=[{"id": "q", "inputs": {"passages": text}, "reference": "Sydney"}],
        comparator="contains",
    )
    row = result.row("cut")
    assert row.application.checked and row.application.applied
    assert (row.verdict, row.reason) == ("confirmed", "majority-flip")


HOSTILE_PASSAGE = "Passage 3: <script>window.pwned = 1</script> it moved to Sydney."


def test_the_report_draws_the_call_with_the_culprit_marked(tmp_path: Path) -> None:
    """report.html shows the messages part by part: the culprit highlighted with its id, the
    question greyed, and a passage's markup escaped (a recorded call is data)."""
    with StandIn(median_s=0.001, p95_s=0.003, answer=context_model(["moved to Sydney"])) as api:
        call = _write(tmp_path, recorded_call(passages(6, {3: HOSTILE_PASSAGE})))
        code, _, err = _blame(api, call, tmp_path / "out")
    assert code == 0, err
    page = (tmp_path / "out" / "report.html").read_text()
    assert "<script>window.pwned" not in page
    assert "<mark>Passage 3: &lt;script&gt;window.pwned = 1&lt;/script&gt;" in page
    assert '<span class="pid">m1.p3</span>' in page
    assert 'class="kept" title="m1.p6: not a suspect"' in page  # the question


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (.ci/run installs it)")
def test_the_marked_culprit_is_on_screen_in_chromium(tmp_path: Path) -> None:
    with StandIn(median_s=0.001, p95_s=0.003, answer=context_model(["moved to Sydney"])) as api:
        call = _write(tmp_path, recorded_call(passages(6, {3: HOSTILE_PASSAGE})))
        assert _blame(api, call, tmp_path / "out")[0] == 0
    with Browser() as browser:
        browser.open((tmp_path / "out" / "report.html").as_uri())
        marked = browser.wait_for("document.querySelector('.call mark')?.textContent")
        assert marked == HOSTILE_PASSAGE
        assert browser.js("window.pwned === undefined") is True


def test_a_bisection_stops_when_a_probe_still_sent_the_part_it_removed(tmp_path: Path) -> None:
    """find_culprits over a runner that lists the parts it sent but ignores the removal: the
    search stops inconclusive and says why, instead of 'not-reproducible'."""
    from counterfact import find_culprits

    (tmp_path / "agent.py").write_text(PARTS_IGNORED)
    result = find_culprits(
        ["m0.p0", "m0.p1", "m0.p2"],
        str(tmp_path / "agent.py") + ":run",
        reference="Sydney",
        comparator="contains",
        executor="local",
    )
    assert result.verdict == "inconclusive" and result.record.culprits == []
    assert (
        "still sent" in result.record.claim and "did not apply the removal" in result.record.claim
    )


def _otlp(span_id: str, user: str) -> dict[str, Any]:
    attrs = {
        "gen_ai.request.model": {"stringValue": "stand-in"},
        "gen_ai.request.temperature": {"doubleValue": 0.0},
        "gen_ai.input.messages": {
            "stringValue": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": user}]}]
            )
        },
    }
    span = {"spanId": span_id, "attributes": [{"key": k, "value": v} for k, v in attrs.items()]}
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


def test_a_span_id_cannot_lead_records_out_of_runs(
    tmp_path: Path, api_one: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default run directory is named after the call; a hostile span id is cleaned."""
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    user = "\n\n".join([*passages(4, {1: PLANTED}), "What is the capital?"])
    path = _write(tmp_path, _otlp("../../escaped", user), "trace.json")
    code, _, err = invoke("blame", str(path), "--base-url", api_one.base_url, "--no-report")
    assert code == 0, err
    assert (work / "runs" / "blame-escaped" / "blame.json").is_file()
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "a" / "escaped").exists()


def test_many_calls_one_broken_is_its_own_line_and_all_broken_exits_1(
    tmp_path: Path, api_one: StandIn
) -> None:
    calls = tmp_path / "calls"
    calls.mkdir()
    _write(calls, recorded_call(passages(6, {2: PLANTED})), "000001.json")
    lonely = {"model": "stand-in", "messages": [{"role": "user", "content": "One.\n\nWhy?"}]}
    _write(calls, lonely, "000002.json")  # one suspect only: this call cannot be blamed
    code, out, err = _blame(api_one, calls, tmp_path / "out", "--no-report")
    assert code == 0, err
    lines = [json.loads(x) for x in (tmp_path / "out" / "blame.jsonl").read_text().splitlines()]
    assert lines[0]["culprits"] == [["m1.p2"]]
    assert lines[1]["verdict"] is None and "nothing to search between" in lines[1]["error"]
    assert "000002: not blamed" in out
    only_broken = tmp_path / "broken"
    only_broken.mkdir()
    _write(only_broken, lonely, "a.json")
    _write(only_broken, lonely, "b.json")
    code, _, err = _blame(api_one, only_broken, tmp_path / "out2", "--no-report")
    assert code == 1 and "no call could be blamed" in err


def test_expect_says_when_the_replay_already_gives_the_expected_answer(
    tmp_path: Path, api_one: StandIn
) -> None:
    call = _write(tmp_path, recorded_call(passages(6, {})))  # the stand-in says Canberra here
    code, out, err = _blame(api_one, call, tmp_path / "out", "--no-report", "--expect", "Canberra")
    assert code == 0, err
    assert "already gives the expected answer on 2 of 2 seeds" in out


def test_replies_that_vary_at_temperature_0_are_flagged_and_decide_test_is_at_hand(
    tmp_path: Path,
) -> None:
    """An API that words its reply differently per seed at temperature 0: the majority rule
    still finds the passage, and the output warns to rerun under --decide test, which then
    uses the paired test on --samples seeds."""
    inner = context_model(["moved to Sydney"])

    def wordy(body: dict[str, Any]) -> str:
        return inner(body) + (" Indeed." if int(body.get("seed") or 0) % 2 else "")

    with StandIn(median_s=0.001, p95_s=0.003, answer=wordy) as api:
        call = _write(tmp_path, recorded_call(passages(6, {2: PLANTED})))
        code, out, err = _blame(api, call, tmp_path / "out", "--no-report")
        assert code == 0, err
        assert "warning: the replies differed across seeds" in out
        code, out, err = _blame(
            api, call, tmp_path / "tested", "--no-report", "--decide", "test", "--samples", "6"
        )
    assert code == 0, err
    record = json.loads((tmp_path / "tested" / "blame.json").read_text())
    assert record["decide"] == "test" and record["culprits"] == [["m1.p2"]]
    assert "warning" not in out


@pytest.mark.parametrize("rank", ["loo", "surrogate"])
def test_a_ranking_pass_orders_the_search_and_its_probes_are_not_rerun(
    tmp_path: Path, rank: str
) -> None:
    """The culprit shares no word with the answer, so the free lexical prior puts it late;
    leave-one-out and the surrogate put it first, and the search then reads their probes back."""
    noword = "Passage 6: the legislature relocated to the harbour city."
    with StandIn(
        median_s=0.001, p95_s=0.003, answer=context_model(["relocated to the harbour city"])
    ) as api:
        call = _write(tmp_path, recorded_call(passages(10, {6: noword})))
        code, _, err = _blame(api, call, tmp_path / "out", "--no-report", "--rank", rank)
        served = api.stats.served
    assert code == 0, err
    record = json.loads((tmp_path / "out" / "blame.json").read_text())
    assert record["culprits"] == [["m1.p6"]]
    assert record["rank"]["method"] == rank and record["rank"]["order"] == record["suspects"]
    assert record["rank"]["probes"] == record["ranking_probes"] > 0
    assert record["suspects"][0] == "m1.p6"
    runs = (tmp_path / "out" / "runs.jsonl").read_text().splitlines()
    assert served == len(runs)  # every call was recorded once: nothing ran twice


def test_a_priced_blame_says_what_it_spent_in_usd(tmp_path: Path, api_one: StandIn) -> None:
    call = _write(tmp_path, recorded_call(passages(6, {2: PLANTED})))
    code, out, err = _blame(api_one, call, tmp_path / "out", "--no-report", "--price", "1", "2")
    assert code == 0, err
    runs = [json.loads(x) for x in (tmp_path / "out" / "runs.jsonl").read_text().splitlines()]
    usd = sum(r["cost"]["usd"] for r in runs)
    assert usd > 0 and f"usd {usd:.4f}" in out


def test_a_ranking_pass_waits_for_the_baseline_and_keeps_to_the_budget(
    tmp_path: Path, api_one: StandIn
) -> None:
    """An unreproducible replay spends no ranking probe; a pass that would take more than half
    of --max-probes is skipped, the search keeps its whole budget."""
    call = _write(tmp_path, recorded_call(passages(10, {})))  # the replay says Canberra
    code, _, err = _blame(api_one, call, tmp_path / "a", "--no-report", "--rank", "loo")
    assert code == 0, err
    record = json.loads((tmp_path / "a" / "blame.json").read_text())
    assert record["reason"] == "unstable-baseline" and record["ranking_probes"] == 0
    assert record["execution"]["runs_used"] == 2  # the baseline probe alone
    call = _write(tmp_path, recorded_call(passages(10, {4: PLANTED})), "c2.json")
    code, _, err = _blame(
        api_one, call, tmp_path / "b", "--no-report", "--rank", "loo", "--max-probes", "12"
    )
    assert code == 0, err
    record = json.loads((tmp_path / "b" / "blame.json").read_text())
    assert record["ranking_probes"] == 0 and record["culprits"] == [["m1.p4"]]


def test_a_whole_message_culprit_is_shown_with_its_text(tmp_path: Path, api_one: StandIn) -> None:
    """With --parts messages the culprit is a whole message: its text is printed, not blank."""
    data = recorded_call(passages(3, {}))
    data["request"]["messages"].insert(1, {"role": "user", "content": PLANTED})
    call = _write(tmp_path, data)
    code, out, err = _blame(api_one, call, tmp_path / "out", "--no-report", "--parts", "messages")
    assert code == 0, err
    assert f"m1: {PLANTED!r}" in out


def test_one_call_s_usd_budget_stops_its_search_and_a_raised_one_resumes_it(
    tmp_path: Path, api_one: StandIn
) -> None:
    call = _write(tmp_path, recorded_call(passages(12, {5: PLANTED})))
    priced = ("--no-report", "--price", "1", "2", "--rank", "given")
    code, _, err = _blame(api_one, call, tmp_path / "whole", *priced)
    assert code == 0, err
    runs = (tmp_path / "whole" / "runs.jsonl").read_text().splitlines()
    whole = sum(json.loads(r)["cost"]["usd"] for r in runs)
    # a third of what the whole search spent: the baseline fits, the search does not
    cap = f"usd={whole / 3:.6f}"
    out = tmp_path / "out"
    code, shown, err = _blame(api_one, call, out, *priced, "--budget", cap)
    assert code == 4, err
    assert "budget: budget reached (usd)" in err and "raise budget.usd" in err
    record = json.loads((out / "blame.json").read_text())  # written before the exit
    assert (record["verdict"], record["reason"], record["culprits"]) == (
        "inconclusive",
        "spend-exhausted",
        [],
    )
    assert record["execution"]["status"] == "budget-exhausted"
    assert "the spend budget stopped the search" in shown
    spent = len((out / "runs.jsonl").read_text().splitlines())
    assert 0 < spent < len(runs)
    api_one.stats.served = 0
    code, _, err = _blame(api_one, call, out, *priced, "--budget", f"usd={whole * 2:.6f}")
    assert code == 0, err
    record = json.loads((out / "blame.json").read_text())
    assert record["culprits"] == [["m1.p5"]]
    assert api_one.stats.served == len(runs) - spent  # the runs already bought are read back


def test_one_call_s_runs_budget_stops_its_search_and_a_raised_one_resumes_it(
    tmp_path: Path, api_one: StandIn
) -> None:
    call = _write(tmp_path, recorded_call(passages(12, {5: PLANTED})))
    given = ("--no-report", "--rank", "given")
    code, _, err = _blame(api_one, call, tmp_path / "whole", *given)
    assert code == 0, err
    whole = len((tmp_path / "whole" / "runs.jsonl").read_text().splitlines())
    out = tmp_path / "out"
    api_one.stats.served = 0
    cap = whole // 3  # the baseline fits, the search does not
    code, shown, err = _blame(api_one, call, out, *given, "--budget", f"runs={cap}")
    assert code == 4, err
    assert "budget: budget reached (runs)" in err and "raise budget.runs" in err, err
    record = json.loads((out / "blame.json").read_text())  # written before the exit
    assert (record["verdict"], record["reason"], record["culprits"]) == (
        "inconclusive",
        "spend-exhausted",
        [],
    )
    assert record["execution"]["status"] == "budget-exhausted"
    assert record["execution"]["budget"]["limits"] == {"runs": cap}
    assert "the spend budget stopped the search" in shown
    spent = len((out / "runs.jsonl").read_text().splitlines())
    # no retries at the stand-in: one model call a run; never past the cap (no run in flight
    # beyond it: the budget reserves the runs in flight at one call each)
    assert 0 < spent == api_one.stats.served <= cap
    api_one.stats.served = 0
    code, _, err = _blame(api_one, call, out, *given, "--budget", f"runs={whole * 2}")
    assert code == 0, err
    record = json.loads((out / "blame.json").read_text())
    assert record["culprits"] == [["m1.p5"]]
    assert api_one.stats.served == whole - spent  # the runs already bought are read back
