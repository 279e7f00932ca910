"""The built-in chat runner (``runner: {kind: chat}``): prompt experiments from a YAML file alone,
against the loopback stand-in (tests/standin.py) through the real ``openai`` client.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from counterfact import ConfigError, RunsFailed, compare_arms, load_sweep

from ...conftest import TESTS, write_config
from ...echo_server import echo_server
from ...helpers import invoke
from ...standin import StandIn

QUESTION = "What is the capital of France?"
SCENARIOS = [{"id": "capital", "inputs": {"question": QUESTION}, "reference": "Paris"}]


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "none")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def _runs(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]


def _verdicts(out: Path) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in (out / "verdicts.jsonl").read_text().splitlines()]
    return {row["arm"]: row for row in rows}


def _chat(api: StandIn, **settings: Any) -> dict[str, Any]:
    return {"kind": "chat", "base_url": api.base_url, "model": "steady-model", **settings}


def _sweep_text(base_url: str | None) -> str:
    url = f"\n  base_url: {base_url}" if base_url else ""
    return textwrap.dedent(
        """\
        name: chat-e2e
        runner:
          kind: chat{url}
          model: steady-model
          system: Answer with one word.
          prompt: "Question: {{question}}"
          price: {{input_per_1k: 0.5, output_per_1k: 1.5}}
        samples: 6
        cost_key: tokens
        scenarios:
          - id: capital
            inputs: {{question: "{question}"}}
            reference: Paris
        arms:
          - id: baseline
          - id: contrary-system
            facets: {{system: "Be contrary. Answer with one word."}}
          - id: flaky-model
            facets: {{model: flaky-model}}
        comparator: contains
        """
    ).format(url=url, question=QUESTION)


@pytest.mark.parametrize("endpoint", ["runner.base_url", "OPENAI_BASE_URL"])
def test_a_sweep_file_with_no_python_runs_end_to_end(
    endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with StandIn(median_s=0.01, p95_s=0.02) as api:
        if endpoint == "OPENAI_BASE_URL":
            monkeypatch.setenv("OPENAI_BASE_URL", api.base_url)
        in_file = api.base_url if endpoint == "runner.base_url" else None
        path = write_config(tmp_path, _sweep_text(in_file))
        code, out, err = invoke("run", str(path), "--out", str(tmp_path / "o"))
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o", "sweep.yaml"]  # no Python at all
    assert "executor: local (api-bound default" in out + err
    verdicts = _verdicts(tmp_path / "o")
    assert verdicts["baseline"]["reason"] is None and verdicts["baseline"]["flips"] == 0
    # the stand-in answers Lyon to a system message that says 'contrary'; flaky-model on odd seeds
    assert verdicts["contrary-system"]["verdict"] == "confirmed"
    assert verdicts["contrary-system"]["flips"] == 6
    assert verdicts["flaky-model"]["flips"] == 3
    assert verdicts["flaky-model"]["flipped_seeds"] == [1, 3, 5]
    assert all(v["application"]["applied"] is not False for v in verdicts.values())
    assert api.stats.served == 18 and api.stats.refused == 0


def test_an_empty_system_template_is_sent_as_written(tmp_path: Path) -> None:
    # system: "" was a template to check and to report, but the request dropped it as if it
    # were null: only null (or leaving it out) sends no system message
    with StandIn(median_s=0.01, p95_s=0.02) as api:
        compare_arms(
            [{"id": "base"}, {"id": "empty", "facets": {"system": ""}}],
            _chat(api, system="Answer with one word.", prompt="{question}"),
            samples=2,
            scenarios=[{"id": "c", "inputs": {"question": QUESTION}}],
            comparator="contains",
            out=tmp_path / "o",
        )
    systems = sorted(b["messages"][0]["content"] for b in api.stats.bodies)
    assert systems == ["", "", "Answer with one word.", "Answer with one word."]


def test_the_request_fills_templates_and_takes_each_arms_facets(tmp_path: Path) -> None:
    with StandIn(median_s=0.01, p95_s=0.02) as api:
        runner = _chat(
            api,
            system="You answer questions about {topic}.",
            messages=[
                {"role": "user", "content": "Capital of Italy?"},
                {"role": "assistant", "content": "Rome"},
            ],
            prompt="{question} ({topic}, {{one word}})",
            temperature=0.2,
            max_tokens=5,
            request={"top_p": 0.9},
        )
        compare_arms(
            [
                {"id": "base"},
                {"id": "warm", "facets": {"temperature": 1.0, "stop": ["\n"]}},
                {"id": "bare", "facets": {"system": None, "messages": []}},
            ],
            runner,
            samples=2,
            scenarios=[{"id": "c", "inputs": {"question": QUESTION, "topic": "geography"}}],
            comparator="contains",
            out=tmp_path / "o",
        )
    sent = {(b["temperature"], len(b["messages"]), b["seed"]): b for b in api.stats.bodies}
    base = sent[(0.2, 4, 0)]
    assert base["messages"] == [
        {"role": "system", "content": "You answer questions about geography."},
        {"role": "user", "content": "Capital of Italy?"},
        {"role": "assistant", "content": "Rome"},
        {"role": "user", "content": f"{QUESTION} (geography, {{one word}})"},
    ]
    assert base["model"] == "steady-model" and base["max_tokens"] == 5 and base["top_p"] == 0.9
    assert "stop" not in base
    warm = sent[(1.0, 4, 1)]
    assert warm["stop"] == ["\n"] and warm["max_tokens"] == 5
    bare = sent[(0.2, 1, 0)]
    assert bare["messages"] == [
        {"role": "user", "content": f"{QUESTION} (geography, {{one word}})"}
    ]
    assert sorted(b["seed"] for b in api.stats.bodies) == [0, 0, 0, 1, 1, 1]  # each run's seed


def test_the_manifest_reports_what_the_api_served_and_what_was_sent(tmp_path: Path) -> None:
    serve_as = {"alias-model": "alias-model-2024-08-06", "big-model": "small-model"}
    with StandIn(median_s=0.01, p95_s=0.02, serve_as=serve_as) as api:
        result = compare_arms(
            [
                {"id": "base", "facets": {"model": "steady-model", "temperature": 0.5}},
                {"id": "alias", "facets": {"model": "alias-model", "temperature": 0.5}},
                {"id": "fallback", "facets": {"model": "big-model", "temperature": 0.5}},
                {"id": "terse", "facets": {"system": "One word only."}},
            ],
            _chat(api, prompt="{question}", temperature=0.5),
            samples=2,
            scenarios=SCENARIOS,
            comparator="contains",
            out=tmp_path / "o",
        )
    by_arm = {r["arm"]: r["manifest"] for r in _runs(tmp_path / "o") if r["seed"] == 0}
    assert by_arm["base"] == {
        "model": "steady-model",
        "served_model": "steady-model",
        "temperature": 0.5,
        "parts": ["m0.p0"],  # the one user message, one paragraph: what it sent
    }
    # a dated snapshot of the model asked for is that model; served_model keeps the API's words
    assert by_arm["alias"]["model"] == "alias-model"
    assert by_arm["alias"]["served_model"] == "alias-model-2024-08-06"
    assert result.row("alias").application.applied is True
    # a silent fallback to another model contradicts the arm: its verdict is withheld
    assert by_arm["fallback"]["model"] == "small-model"
    fallback = result.row("fallback")
    assert fallback.application.applied is False and fallback.reason == "arm-not-applied"
    assert by_arm["terse"]["system"] == "One word only."  # a declared template is reported
    assert result.row("terse").application.applied is True


def test_cost_comes_from_usage_and_the_price(tmp_path: Path) -> None:
    with StandIn(median_s=0.01, p95_s=0.02) as api:
        result = compare_arms(
            [{"id": "base"}, {"id": "alt", "facets": {"model": "flaky-model"}}],
            _chat(
                api,
                system="Answer with one word.",
                prompt="Question: {question}",
                price={"input_per_1k": 0.15, "output_per_1k": 0.6},
            ),
            samples=3,
            scenarios=SCENARIOS,
            comparator="contains",
            out=tmp_path / "o",
            budget={"usd": 1.0},
        )
    # the stand-in counts the prompt's words as input tokens and answers with one token
    words = 4 + len(f"Question: {QUESTION}".split())  # "Answer with one word." is 4 words
    usd = (words * 0.15 + 1 * 0.6) / 1000
    for run in _runs(tmp_path / "o"):
        assert run["cost"] == {
            "input_tokens": words,
            "output_tokens": 1.0,
            "tokens": words + 1.0,
            "usd": pytest.approx(usd),
        }
    spent = result.summary.execution.spend
    assert spent is not None and spent.total["usd"] == pytest.approx(6 * usd)
    budget = result.summary.execution.budget
    assert budget is not None and budget.spent["usd"] == pytest.approx(6 * usd)


def test_without_a_price_there_is_no_usd(tmp_path: Path) -> None:
    with StandIn(median_s=0.01, p95_s=0.02) as api:
        compare_arms(
            [{"id": "base"}, {"id": "alt", "facets": {"temperature": 0.9}}],
            _chat(api, prompt="{question}"),
            samples=2,
            scenarios=SCENARIOS,
            out=tmp_path / "o",
        )
    assert all(
        set(r["cost"]) == {"input_tokens", "output_tokens", "tokens"} for r in _runs(tmp_path / "o")
    )


def test_send_seed_false_sends_no_seed_and_says_so(tmp_path: Path) -> None:
    with StandIn(median_s=0.01, p95_s=0.02) as api:
        sweep = load_sweep(
            {
                "name": "no-seed",
                "runner": _chat(api, prompt="{question}", send_seed=False),
                "scenarios": SCENARIOS,
                "arms": [{"id": "base"}, {"id": "alt", "facets": {"temperature": 0.9}}],
            }
        )
        assert any("send_seed is false" in note for note in sweep.notes)
        paired_by_none = load_sweep(
            {**sweep.config.model_dump(), "statistics": {"pairing": "none"}}
        )
        assert not any("send_seed" in note for note in paired_by_none.notes)
        compare_arms(
            [{"id": "base"}, {"id": "alt", "facets": {"temperature": 0.9}}],
            _chat(api, prompt="{question}", send_seed=False),
            samples=2,
            scenarios=SCENARIOS,
            statistics={"pairing": "none"},
            out=tmp_path / "o",
        )
    assert api.stats.bodies and all("seed" not in b for b in api.stats.bodies)


def test_429s_are_waited_out_for_as_long_as_retry_after_says(tmp_path: Path) -> None:
    with StandIn(median_s=0.05, p95_s=0.1, max_in_flight=3, retry_after=0.2) as api:
        result = compare_arms(
            [{"id": "base"}, {"id": "alt", "facets": {"model": "flaky-model"}}],
            _chat(api, prompt="{question}"),
            samples=12,
            scenarios=SCENARIOS,
            comparator="contains",
            executor={"kind": "local", "concurrency": 12},
            out=tmp_path / "o",
        )
    runs = _runs(tmp_path / "o")
    assert result.summary.execution.runs_failed == 0 and all(r["error"] is None for r in runs)
    assert api.stats.refused > 0 and sum(r["rate_limited"] for r in runs) == api.stats.refused
    for run in runs:  # each refusal waited the server's Retry-After (0.2 s), not a short backoff
        assert run["rate_limited_s"] >= 0.2 * run["rate_limited"] - 1e-6
        assert run["attempts"] == 1
    assert result.row("alt").flips == 6


def test_the_runner_is_chosen_in_process_and_its_identity_is_its_settings(tmp_path: Path) -> None:
    def sweep(prompt: str, **extra: Any) -> Any:
        return load_sweep(
            {
                "name": "ident",
                "runner": {"kind": "chat", "model": "m", "prompt": prompt, **extra},
                "scenarios": SCENARIOS,
                "arms": [{"id": "base"}, {"id": "alt", "facets": {"temperature": 0.9}}],
            }
        )

    first = sweep("{question}")
    assert (first.executor.kind, first.executor.chosen) == ("local", "api-bound default")
    assert first.runner_identity.startswith("chat@sha256:")
    assert sweep("{question}").runner_identity == first.runner_identity
    assert sweep("Q: {question}").runner_identity != first.runner_identity
    assert sweep("{question}", max_tokens=9).runner_identity != first.runner_identity
    pinned = load_sweep(
        {
            "name": "ident",
            "runner": {"kind": "chat", "model": "m", "prompt": "{question}"},
            "runner_version": "v2",
            "scenarios": SCENARIOS,
            "arms": [{"id": "base"}, {"id": "alt", "facets": {"temperature": 0.9}}],
        }
    )
    assert pinned.runner_identity == "chat@version:v2"
    assert first.resolved_config()["runner"]["prompt"] == "{question}"


def test_an_edited_prompt_is_a_changed_runner_on_resume(tmp_path: Path) -> None:
    with StandIn(median_s=0.01, p95_s=0.02) as api:
        path = write_config(tmp_path, _sweep_text(api.base_url))
        code, _, err = invoke("run", str(path), "--out", str(tmp_path / "o"))
        assert code == 0, err
        path.write_text(path.read_text().replace("Question: ", "Q: "))
        code, _, err = invoke("run", str(path), "--out", str(tmp_path / "o"))
        served = api.stats.served
    assert code == 2 and "runner: was 'chat@sha256:" in err
    assert served == 18  # the refused resume ran nothing


# --- refused before any run ------------------------------------------------------------------


def _refused(tmp_path: Path, runner: dict[str, Any], **config: Any) -> str:
    with StandIn() as api:
        section = {"kind": "chat", "base_url": api.base_url, "model": "m", **runner}
        raw = {
            "name": "bad",
            "runner": section,
            "scenarios": SCENARIOS,
            "arms": [{"id": "base"}, {"id": "alt", "facets": {"temperature": 0.9}}],
            **config,
        }
        write_config(tmp_path, json.dumps(raw), "sweep.yaml")
        code, out, err = invoke("run", str(tmp_path / "sweep.yaml"), "--out", str(tmp_path / "o"))
        served = api.stats.served + api.stats.refused
    assert code == 2 and served == 0, (out, err)
    assert len(err.strip().splitlines()) == 1, err  # one clean line, no traceback
    return err.strip()


def test_a_template_naming_an_input_the_scenario_lacks_is_refused(tmp_path: Path) -> None:
    err = _refused(tmp_path, {"prompt": "Answer: {questoin}"})
    assert "runner.prompt" in err and "{questoin}" in err
    assert "scenario 'capital'" in err and "its inputs are: question" in err


def test_a_facet_template_is_checked_too_and_named_by_its_arm(tmp_path: Path) -> None:
    arms = [{"id": "base"}, {"id": "alt", "facets": {"system": "Topic: {topic}"}}]
    err = _refused(tmp_path, {"prompt": "{question}"}, arms=arms)
    assert "arms[1].facets.system" in err and "{topic}" in err


def test_a_template_that_cannot_be_filled_is_refused(tmp_path: Path) -> None:
    err = _refused(tmp_path, {"prompt": "{question:.2f}"})
    assert "runner.prompt" in err and "cannot be filled" in err and "ValueError" in err


def test_a_missing_api_key_is_refused_before_any_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    err = _refused(tmp_path, {"prompt": "{question}"})
    assert "runner.api_key_env" in err and "OPENAI_API_KEY is not set" in err
    err = _refused(tmp_path, {"prompt": "{question}", "api_key_env": "VLLM_KEY"})
    assert "VLLM_KEY is not set" in err


def test_an_arm_without_a_model_is_refused(tmp_path: Path) -> None:
    err = _refused(tmp_path, {"prompt": "{question}", "model": None})
    assert "runner.model" in err and "asks for no model" in err


@pytest.mark.parametrize(
    ("arm", "words"),
    [
        ({"id": "alt", "ablations": ["system"]}, "'system', which is no part of what"),
        ({"id": "alt", "ablations": ["m0.p1"]}, "did you mean 'm0.p0'?"),
        ({"id": "alt", "restorations": ["m0"]}, "which is no optional passage"),
        ({"id": "alt", "facets": {"base_url": "http://x"}}, "arms[1].facets.base_url"),
        ({"id": "alt", "facets": {"seed": 3}}, "each run's seed is sent"),
        ({"id": "alt", "facets": {"system": 3}}, "must be text"),
        ({"id": "alt", "facets": {"messages": [{"role": "bot", "content": "x"}]}}, "role"),
    ],
)
def test_what_an_arm_cannot_vary_is_refused(
    arm: dict[str, Any], words: str, tmp_path: Path
) -> None:
    err = _refused(tmp_path, {"prompt": "{question}"}, arms=[{"id": "base"}, arm])
    assert words in err


@pytest.mark.parametrize(
    ("section", "words"),
    [
        ({"prompt": "{question"}, "runner.prompt: expected '}'"),
        ({"prompt": "{} and {0}"}, "positional"),
        ({"promt": "{question}"}, "did you mean 'prompt'?"),
        ({"prompt": "x", "request": {"seed": 1}}, "request.seed is set by counterfact"),
        ({"prompt": "x", "request": {"temperature": 1}}, "write runner.temperature"),
        ({}, "needs a 'prompt'"),
    ],
)
def test_a_malformed_section_is_refused_by_the_schema(
    section: dict[str, Any], words: str, tmp_path: Path
) -> None:
    assert words in _refused(tmp_path, section)


def test_a_misspelt_request_field_is_a_note(tmp_path: Path) -> None:
    sweep = load_sweep(
        {
            "name": "typo",
            "runner": {"kind": "chat", "model": "m", "prompt": "{question}"},
            "scenarios": SCENARIOS,
            "arms": [{"id": "base"}, {"id": "alt", "facets": {"temprature": 0.9}}],
        }
    )
    assert any("'temprature'" in n and "did you mean 'temperature'" in n for n in sweep.notes)


def test_bisect_over_the_chat_runner_refuses_a_suspect_that_is_no_part(tmp_path: Path) -> None:
    raw = {
        "name": "b",
        "runner": {"kind": "chat", "model": "m", "prompt": "{question}"},
        "scenarios": SCENARIOS,
        "bisect": {"suspects": ["system"]},
    }
    path = write_config(tmp_path, json.dumps(raw))
    code, _, err = invoke("bisect", str(path), "--out", str(tmp_path / "o"))
    assert code == 2 and "'system' is no part of what scenario 'capital' sends" in err
    assert "its parts are m0.p0" in err


def test_10000_scenarios_are_checked_and_the_odd_one_named(tmp_path: Path) -> None:
    rows = [{"id": f"q{i}", "inputs": {"question": f"q {i}"}} for i in range(10_000)]
    rows[7_777] = {"id": "q7777", "inputs": {"query": "?"}}
    (tmp_path / "qs.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    with pytest.raises(ConfigError, match=r"scenario 'q7777' does not have; its inputs are: query"):
        load_sweep(
            {
                "name": "big",
                "runner": {"kind": "chat", "model": "m", "prompt": "Q: {question}"},
                "scenarios": {"file": "qs.jsonl"},
                "arms": [{"id": "base"}, {"id": "alt", "facets": {"temperature": 0.9}}],
            },
            base_dir=tmp_path,
        )


def test_the_example_runs_against_an_openai_compatible_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    example = TESTS.parent / "configs" / "chat_prompt.yaml"
    with StandIn(median_s=0.01, p95_s=0.02) as api:
        monkeypatch.setenv("OPENAI_BASE_URL", api.base_url)
        code, _, err = invoke(
            "run", str(example), "--set", "samples=2", "--out", str(tmp_path / "o")
        )
    assert code == 0, err
    runs = _runs(tmp_path / "o")
    assert len(runs) == 6 * 5 * 2 and all(r["error"] is None for r in runs)
    shapes = {(len(b["messages"]), b["temperature"], b["max_tokens"]) for b in api.stats.bodies}
    # baseline and aa: system + few-shot pair + question; no-few-shot: 2; hot: temperature 1.5
    assert shapes == {(4, 0.7, 20), (2, 0.7, 20), (4, 1.5, 20)}
    assert _verdicts(tmp_path / "o")["terse-system"]["application"]["applied"] is True


@pytest.mark.parametrize("url", ["ftp://example.com/v1", "file:///etc/passwd", "localhost:8000"])
def test_a_base_url_that_is_no_http_url_is_refused_before_any_run(tmp_path: Path, url: str) -> None:
    err = _refused(tmp_path, {"prompt": "{question}", "base_url": url})
    assert "runner.base_url" in err and "is not an http(s) URL with a host" in err


def test_a_reply_that_is_not_json_is_a_failed_run_that_says_so(tmp_path: Path) -> None:
    with (
        StandIn(median_s=0.001, p95_s=0.002, raw="<html>gateway error</html>") as api,
        pytest.raises(RunsFailed) as caught,
    ):
        compare_arms(
            [{"id": "base"}, {"id": "hot", "facets": {"temperature": 1.0}}],
            _chat(api, prompt="{question}"),
            samples=2,
            scenarios=SCENARIOS,
            comparator="contains",
            out=tmp_path / "o",
        )
    errors = {r["error"]["type"]: r["error"]["message"] for r in _runs(tmp_path / "o")}
    assert "AttributeError" not in errors, caught.value
    assert (
        "not a chat completion (not JSON?): '<html>gateway error</html>'"
        in errors["RunnerReturnError"]
    )


def test_a_server_that_echoes_the_key_does_not_get_it_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-live-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    with StandIn(median_s=0.001, p95_s=0.002, answer=lambda body: f"Paris (key {secret})") as api:
        compare_arms(
            [{"id": "base"}, {"id": "hot", "facets": {"temperature": 1.0}}],
            _chat(api, prompt="{question}"),
            samples=2,
            scenarios=SCENARIOS,
            comparator="contains",
            out=tmp_path / "o",
        )
    written = "".join(p.read_text() for p in (tmp_path / "o").iterdir() if p.is_file())
    assert secret not in written
    assert "[redacted API key]" in written


@pytest.mark.parametrize("where", ["ok", "error"])
def test_a_key_echoed_in_the_model_name_id_or_an_error_body_is_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """Issue 45 item 8: the key was redacted from outputs only; a server that put it in the
    served model's name or in an error's body got it into runs.jsonl, summary.json and
    report.html."""
    secret = "sk-live-echoed-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    with echo_server() as root:
        runner = {"kind": "chat", "base_url": f"{root}{where}/v1", "model": "m", "prompt": "{q}"}
        try:
            compare_arms(
                [{"id": "base"}, {"id": "hot", "facets": {"temperature": 1.0}}],
                runner,
                samples=2,
                scenarios=[{"id": "s", "inputs": {"q": "capital?"}, "reference": "Paris"}],
                comparator="contains",
                out=tmp_path / "o",
            )
        except RunsFailed:
            assert where == "error"
    written = "".join(p.read_text() for p in (tmp_path / "o").iterdir() if p.is_file())
    assert "[redacted API key]" in written
    assert secret not in written
    if where == "error":
        (first, *_) = _runs(tmp_path / "o")
        assert first["error"]["type"] == "BadRequestError"  # the client's class is kept
