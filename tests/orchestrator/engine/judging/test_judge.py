"""The model-graded comparator (``comparator: {kind: judge}``) against a loopback judge: the real
``openai`` client, a stand-in server whose reply is decided by the prompt it is sent.
"""

from __future__ import annotations

import json
import re
import socket
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from counterfact import BudgetExhausted, RunContext, RunResult, compare_arms
from counterfact.exceptions import ConfigError, ScoringError
from counterfact.orchestrator.cli.console import spend_line
from counterfact.orchestrator.engine.judging.judge import (
    DEFAULT_PROMPT,
    JUDGE_FILE,
    JudgeSettings,
    parse_reply,
)
from counterfact.verdicts.report.judgenote import judge_notes

from ....standin import StandIn

LONG = "The capital is Canberra, though Sydney is larger."
WRONG = "It is not Canberra; the capital is Sydney."
MUMBLE = "MUMBLE Canberra"
COIN = "coin Canberra, probably"
ARMS = [{"id": "base", "facets": {"says": "long"}}, {"id": "alt", "facets": {"says": "wrong"}}]
SAYS = {"long": LONG, "wrong": WRONG, "mumble": MUMBLE, "coin": COIN}


def prose(ctx: RunContext) -> RunResult:
    """Answers in prose, one fixed answer per arm (every seed the same text)."""
    says = str(ctx.arm.facets["says"])
    if says == "mostly":  # wrong on two seeds of three, a coin-flip for the judge on the rest
        return RunResult(output=WRONG if ctx.seed % 3 else COIN, manifest={"says": says})
    return RunResult(output=SAYS[says], manifest={"says": says})


def _between(text: str, start: str, end: str) -> str:
    found = re.search(re.escape(start) + r"\n(.*?)\n\n" + re.escape(end), text, re.S)
    return found.group(1) if found else ""


def judge_reply(body: dict[str, Any]) -> str:
    """SAME iff the graded answer holds the reference's key word and no ``not``; a mumble gets
    no verdict; a ``coin`` answer is SAME on even seeds, DIFFERENT on odd ones.
    """
    prompt = str(body["messages"][-1]["content"])
    reference = _between(prompt, "Reference answer:", "Answer to grade:")
    output = _between(prompt, "Answer to grade:", "Does")
    if "MUMBLE" in output:
        return "I think they are about the same, roughly."
    if "coin" in output:
        return "SAME" if int(body.get("seed") or 0) % 2 == 0 else "DIFFERENT"
    key = re.sub(r"\W", "", reference.split()[0]).lower()
    words = re.findall(r"\w+", output.lower())
    return "SAME" if key in words and "not" not in words else "DIFFERENT\nbecause"


def _judge(api_url: str, **more: Any) -> dict[str, Any]:
    return {
        "kind": "judge",
        "model": "judge-model",
        "base_url": api_url,
        "api_key_env": "JUDGE_KEY",
        "price": {"input_per_1k": 1.0, "output_per_1k": 2.0},
        "recheck": 0,
        **more,
    }


def _sweep(
    out: Path | None,
    comparator: dict[str, Any],
    arms: list[dict[str, Any]] = ARMS,
    samples: int = 6,
) -> Any:
    return compare_arms(
        arms,
        prose,
        samples=samples,
        reference="Canberra.",
        comparator=comparator,
        executor="local",
        out=out,
        runner_version="prose-1",
    )


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_KEY", "none")


def test_parse_reply_takes_only_an_exact_verdict_on_the_first_line() -> None:
    assert parse_reply("SAME") is True
    assert parse_reply("  DIFFERENT \nthe answers differ") is False
    assert parse_reply('{"verdict": "SAME"}') is True
    for loose in ("Same.", "They are the SAME", "", "SAME.", '{"verdict": "yes"}', "{broken"):
        assert parse_reply(loose) is None, loose


def test_prose_is_judged_by_its_answer_and_identical_outputs_cost_one_call(
    tmp_path: Path,
) -> None:
    with StandIn(median_s=0.001, p95_s=0.002, answer=judge_reply) as api:
        result = _sweep(tmp_path / "o", _judge(api.base_url))
        served = api.stats.served
    base, alt = result.row("base"), result.row("alt")
    # "The capital is Canberra, though Sydney is larger" gives Canberra: no flip; "It is not
    # Canberra" does not: every seed flips
    assert (base.flips, alt.flips) == (0, 6)
    assert alt.verdict == "confirmed"
    assert served == 2  # 12 outputs, 2 distinct texts: one call each
    judge = result.summary.judges[0]
    assert (judge.judgments, judge.calls, judge.read_back) == (2, 2, 0)
    lines = (tmp_path / "o" / JUDGE_FILE).read_text().splitlines()
    assert len(lines) == 2 and {json.loads(x)["same"] for x in lines} == {True, False}


def test_a_reply_that_is_no_verdict_leaves_the_seed_unscored_not_flipped(tmp_path: Path) -> None:
    arms = [ARMS[0], {"id": "alt", "facets": {"says": "mumble"}}]
    with StandIn(median_s=0.001, p95_s=0.002, answer=judge_reply) as api:
        result = _sweep(tmp_path / "o", _judge(api.base_url), arms)
    alt = result.row("alt")
    assert alt.flips == 0 and alt.verdict == "inconclusive"
    assert any(r.code == "judge-unparseable" for r in alt.reasons)
    assert "not a verdict" in " ".join(r.detail for r in alt.reasons)
    assert result.summary.judges[0].not_verdicts == 1


def test_a_resume_asks_the_judge_nothing_and_still_counts_its_spend(tmp_path: Path) -> None:
    out = tmp_path / "o"
    with StandIn(median_s=0.001, p95_s=0.002, answer=judge_reply) as api:
        first = _sweep(out, _judge(api.base_url))
        (out / "summary.json").unlink()  # resume judges again from the records
        api.stats.served = 0
        again = _sweep(out, _judge(api.base_url))
        assert api.stats.served == 0
    assert again.summary.execution.runs_reused == 12
    judge = again.summary.judges[0]
    assert (judge.calls, judge.read_back) == (0, 2)
    assert (again.row("alt").flips, again.row("base").flips) == (6, 0)
    spend = again.summary.execution.spend
    assert spend is not None and spend.judge == first.summary.execution.spend.judge
    assert spend.judge["calls"] == 2 and spend.judge["usd"] > 0
    # each call: the prompt's words as input tokens, one output token (the stand-in's usage)
    assert spend.judge["usd"] == pytest.approx(
        (spend.judge["tokens"] - 2) * 1.0 / 1000 + 2 * 2.0 / 1000
    )
    line = spend_line(again.summary)
    assert re.search(
        r"; judge tokens 124, usd 0.13 over 2 calls \(base usd [\d.]+ over 1 calls; "
        r"alt usd [\d.]+ over 1 calls\)$",
        line,
    ), line
    # per arm: each arm's one distinct answer is its one call, read back with its arm
    by_arm = spend.judge_by_arm
    assert by_arm is not None and by_arm == first.summary.execution.spend.judge_by_arm
    assert list(by_arm) == ["base", "alt"] and all(c["calls"] == 1 for c in by_arm.values())
    for key in ("tokens", "usd"):
        assert sum(c[key] for c in by_arm.values()) == pytest.approx(spend.judge[key])


def test_the_recheck_measures_the_judges_disagreement_with_itself(tmp_path: Path) -> None:
    arms = [ARMS[0], {"id": "alt", "facets": {"says": "coin"}}]
    with StandIn(median_s=0.001, p95_s=0.002, answer=judge_reply) as api:
        result = _sweep(tmp_path / "o", _judge(api.base_url, recheck=1.0), arms)
        served = api.stats.served
    assert served == 4  # 2 distinct outputs, each asked twice (seed 0, then seed 1)
    judge = result.summary.judges[0]
    assert (judge.rechecked, judge.disagreed, judge.disagreement) == (2, 1, 0.5)
    # scipy.stats.binomtest(1, 2).proportion_ci(method="wilson"): 0.0945 .. 0.9055
    assert judge.low == pytest.approx(0.09453, abs=1e-4)
    assert judge.high == pytest.approx(0.90547, abs=1e-4)
    notes = judge_notes(result.summary.judges, result.rows)
    assert "disagreed with itself on 1 of 2" in notes[0]
    saved = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert saved["judges"][0]["disagreed"] == 1


def test_the_noise_note_names_a_verdict_it_may_decide(tmp_path: Path) -> None:
    arms = [ARMS[0], {"id": "alt", "facets": {"says": "mostly"}}]
    with StandIn(median_s=0.001, p95_s=0.002, answer=judge_reply) as api:
        result = _sweep(tmp_path / "o", _judge(api.base_url, recheck=1.0), arms, samples=12)
        steady = _sweep(tmp_path / "p", _judge(api.base_url, recheck=1.0))  # every seed flips
    alt = result.row("alt")
    assert (alt.flips, alt.verdict) == (8, "confirmed"), alt.claim  # a flip share of 2/3
    judge = result.summary.judges[0]
    # 1 of 3 rechecks disagreed: scipy.stats.binomtest(1, 3).proportion_ci(method="wilson")
    # gives 0.0615 .. 0.7923, above the 0.667 that confirmed alt
    assert judge.disagreed == 1 and judge.high == pytest.approx(0.7923, abs=1e-3)
    notes = judge_notes(result.summary.judges, result.rows)
    assert any("may decide verdicts" in n and "66.7%" in n and "/alt" in n for n in notes)
    assert not any("may decide" in n for n in judge_notes(steady.summary.judges, steady.rows))


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_judge_that_cannot_be_reached_fails_judging_and_the_resume_asks_it(
    tmp_path: Path,
) -> None:
    out = tmp_path / "o"
    down = f"http://127.0.0.1:{_closed_port()}/v1"
    with pytest.raises(ScoringError, match="could not be asked"):
        _sweep(out, _judge(down))
    assert len((out / "runs.jsonl").read_text().splitlines()) == 12  # the runs are recorded
    with StandIn(median_s=0.001, p95_s=0.002, answer=judge_reply) as api:
        result = _sweep(out, _judge(api.base_url))
        assert api.stats.served == 2
    assert result.summary.execution.runs_reused == 12 and result.row("alt").flips == 6


def test_judge_config_errors_say_what_to_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="kind 'judge' needs 'model"):
        _sweep(None, {"kind": "judge"})
    with pytest.raises(ConfigError, match=r"must contain \{output\}"):
        _sweep(None, _judge("http://127.0.0.1:9/v1", prompt="Is {reference} right?"))
    with pytest.raises(ConfigError, match="'model' applies only to kind 'judge'"):
        _sweep(None, {"kind": "exact", "model": "m"})
    monkeypatch.delenv("JUDGE_KEY")
    with pytest.raises(ConfigError, match=r"comparator\.api_key_env: the judge.s API key variable"):
        _sweep(None, _judge("http://127.0.0.1:9/v1"))


def distinct_prose(ctx: RunContext) -> RunResult:
    """A different sentence on every seed (each one a judge call)."""
    says = str(ctx.arm.facets["says"])
    return RunResult(output=f"Canberra, said on try {ctx.seed}.", manifest={"says": says})


def test_the_judges_spend_counts_against_the_budget(tmp_path: Path) -> None:
    out = tmp_path / "o"
    with (
        StandIn(median_s=0.001, p95_s=0.002, answer=judge_reply) as api,
        pytest.raises(BudgetExhausted),
    ):
        compare_arms(
            [ARMS[0], {"id": "alt", "facets": {"says": "again"}}],
            distinct_prose,
            samples=140,
            reference="Canberra.",
            comparator=_judge(api.base_url),  # ~60 input tokens a call: 0.06 usd each
            executor={"kind": "local", "concurrency": 4},
            budget={"usd": 1.0},
            out=out,
            runner_version="distinct-1",
        )
    summary = json.loads((out / "summary.json").read_text())
    runs = (out / "runs.jsonl").read_text().splitlines()
    assert len(runs) < 280, len(
        runs
    )  # the judging of the first batch spent the budget: runs stopped
    assert summary["execution"]["budget"]["spent"]["usd"] == pytest.approx(
        summary["execution"]["spend"]["judge"]["usd"]
    )
    assert summary["execution"]["budget"]["spent"]["usd"] > 1.0


AGENT = """
def run(ctx):
    return {"long": "The capital is Canberra, though Sydney is larger.",
            "wrong": "It is not Canberra; the capital is Sydney."}[ctx.arm.facets["says"]]
"""


def test_run_prints_the_judges_noise_after_the_table_and_its_spend(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from counterfact.orchestrator.cli import main

    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    with StandIn(median_s=0.001, p95_s=0.002, answer=judge_reply) as api:
        (tmp_path / "sweep.yaml").write_text(
            "name: prose\nrunner: agent.py:run\nexecutor: local\nsamples: 4\n"
            "reference: Canberra.\narms:\n  - {id: base, facets: {says: long}}\n"
            "  - {id: alt, facets: {says: wrong}}\n"
            f"comparator: {{kind: judge, model: judge-model, base_url: '{api.base_url}', "
            "api_key_env: JUDGE_KEY, recheck: 1}\n",
            encoding="utf-8",
        )
        result = CliRunner().invoke(
            main, ["run", str(tmp_path / "sweep.yaml"), "--out", str(tmp_path / "o")]
        )
    assert result.exit_code == 0, result.output
    text = result.output
    table_end = text.index("records:")
    note = text.index("note: judge judge-model: disagreed with itself on 0 of 2")
    assert note < table_end  # after the verdict table, before where the records are
    assert "; judge tokens " in text and "over 4 calls" in text


def test_a_question_s_own_judge_grades_against_its_rubric(tmp_path: Path) -> None:
    def rubric_reply(body: dict[str, Any]) -> str:
        prompt = str(body["messages"][-1]["content"])
        assert "Rubric:\nAnswers with the capital, Canberra." in prompt
        output = _between(prompt, "Answer to grade:", "Does")
        return "SAME" if "not" not in output.split() else "DIFFERENT"

    with StandIn(median_s=0.001, p95_s=0.002, answer=rubric_reply) as api:
        result = compare_arms(
            ARMS,
            prose,
            samples=4,
            scenarios=[
                {
                    "id": "capital",
                    "reference": "Canberra.",
                    "expect": _judge(api.base_url, rubric="Answers with the capital, Canberra."),
                }
            ],
            comparator="exact",  # the sweep's default, which would flip every seed of both
            executor="local",
            runner_version="prose-1",
        )
    assert (result.row("base").flips, result.row("alt").flips) == (0, 4)
    assert result.row("alt").check is not None and "judge(" in result.row("alt").check


def test_a_judge_that_echoes_its_key_has_it_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-judge-secret-0123456789"
    monkeypatch.setenv("JUDGE_KEY", secret)
    with StandIn(median_s=0.001, p95_s=0.002, answer=lambda body: f"key {secret}") as api:
        result = _sweep(tmp_path / "o", _judge(api.base_url))
    assert result.row("alt").flips == 0  # no verdict: unscored, not flipped
    for path in (tmp_path / "o").iterdir():
        assert secret not in path.read_text(encoding="utf-8"), path.name
    assert "[redacted API key]" in (tmp_path / "o" / JUDGE_FILE).read_text()


@pytest.mark.parametrize("case", ["huge", "not-an-object", "string"])
def test_a_judge_s_broken_usage_is_not_trusted_and_never_a_traceback(
    tmp_path: Path, case: str
) -> None:
    """Review finding: the judge read ``usage`` as the chat runner did before its checks: a
    400-digit count was written to judge.jsonl and raised OverflowError on every resume."""
    from tests.echo_server import echo_server

    with echo_server() as root:
        comparator = {"kind": "judge", "model": "m", "base_url": f"{root}usage/{case}/v1"}
        comparator |= {"api_key_env": "JUDGE_KEY"}
        result = _sweep(tmp_path / "o", comparator, samples=2)
        again = _sweep(tmp_path / "o", comparator, samples=2)  # a resume reads judge.jsonl back
    (judge,) = result.summary.judges
    assert judge.calls >= 1 and again.summary.judges[0].calls == 0
    spend = result.summary.execution.spend
    assert spend is not None and spend.judge is not None and spend.judge["tokens"] == 0


def test_an_edited_judge_file_line_is_not_trusted(tmp_path: Path) -> None:
    """Review finding: judge.jsonl lines were read back untyped; a 400-digit token count
    raised OverflowError on every resume. Such a line is asked again instead."""
    with StandIn(median_s=0.001, p95_s=0.002, answer=judge_reply) as api:
        _sweep(tmp_path / "o", _judge(api.base_url), samples=2)
        path = tmp_path / "o" / JUDGE_FILE
        lines = [json.loads(x) for x in path.read_text().splitlines()]
        lines[0]["input_tokens"] = 10**400
        path.write_text("".join(json.dumps(x) + "\n" for x in lines))
        again = _sweep(tmp_path / "o", _judge(api.base_url), samples=2)
    assert again.summary.judges[0].calls == 1  # the edited line's judgment, asked again


def test_a_reply_cap_is_sent_when_set_and_a_judge_without_one_keeps_its_identity(
    tmp_path: Path,
) -> None:
    # a local server (llama.cpp's) keeps generating after a call is cut off: max_tokens bounds it
    with StandIn(median_s=0.001, p95_s=0.002, answer=judge_reply) as api:
        _sweep(None, _judge(api.base_url), samples=2)
        uncapped = list(api.stats.bodies)
        api.stats.bodies.clear()
        _sweep(None, _judge(api.base_url, max_tokens=12), samples=2)
        capped = list(api.stats.bodies)
    assert uncapped and all("max_tokens" not in body for body in uncapped)
    assert capped and all(body["max_tokens"] == 12 for body in capped)
    plain = JudgeSettings("m", None, "K", None, DEFAULT_PROMPT, 0, 0.1, None)
    # the identity main gave these settings before the cap existed (printed by
    # JudgeSettings(...).identity() on a37e5ee): a judge.jsonl recorded then still stands
    assert plain.identity() == "judge@sha256:1ca8bed28d1b7bcf"
    assert replace(plain, max_tokens=12).identity() != plain.identity()


def test_the_noise_note_says_whether_rechecks_were_asked_or_gave_no_verdict(
    tmp_path: Path,
) -> None:
    mumbled = [
        {"id": a, "facets": {"says": "mumble", "n": i}} for i, a in enumerate(["base", "alt"])
    ]
    with StandIn(median_s=0.001, p95_s=0.002, answer=judge_reply) as api:
        none_asked = _sweep(None, _judge(api.base_url, recheck=0), samples=2)
        no_verdict = _sweep(None, _judge(api.base_url, recheck=1.0), mumbled, samples=2)
    (quiet,) = judge_notes(none_asked.summary.judges, none_asked.rows)
    assert "its noise is not measured (no judgment was asked twice: recheck 0)" in quiet
    # every judgment rechecked, but the mumble's replies are never verdicts: asked, not measured
    (asked,) = judge_notes(no_verdict.summary.judges, no_verdict.rows)
    assert "(no rechecked judgment gave a verdict both times: recheck 1)" in asked
