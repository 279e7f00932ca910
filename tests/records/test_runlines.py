"""The fast decoders of a runs.jsonl line agree with ``RunRecord.model_validate_json``: the same
record (every field, its type, the fields set) or the same refusal, on usual and odd lines."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from counterfact.records.runlines import brief, brief_of, parse_run
from counterfact.records.runs import RunRecord

USUAL = {
    "schema_version": 6,
    "scenario": "q1",
    "arm": "b",
    "seed": 7,
    "runner_seed": None,
    "output": "yes",
    "manifest": None,
    "cost": None,
    "error": None,
    "duration_s": 6.2e-05,
    "finished_at": "2026-12-05T23:42:29.490+00:00",
    "attempts": 1,
    "from_cache": False,
    "infra_retries": 0,
    "infra_error": None,
    "rate_limited": 0,
    "rate_limited_s": 0.0,
    "text_escaped": False,
    "node": "dfe28386",
}


def _line(**changes: Any) -> str:
    return json.dumps({k: v for k, v in (USUAL | changes).items() if v is not _DROP})


_DROP = object()

VALID = [
    json.dumps(USUAL),
    _line(manifest={"model": "m", "temperature": 0.7, "nested": {"a": [1, None, True]}}),
    _line(output=None, error={"type": "ValueError", "message": "boom", "traceback": "tb"}),
    _line(output=None, error={"type": "TimeoutError", "message": "late"}),
    _line(cost={"tokens": 12, "usd": 0.5}),  # an int cost becomes a float
    _line(cost={"tokens": 1e308, "usd": -1}),  # unspendable: moved to cost_refused
    _line(cost={"tokens": 10**400}),
    _line(cost_refused={"tokens": "inf"}, cost=None),
    _line(duration_s=3),  # an int where a float is kept
    _line(duration_s="1.5", seed="12"),  # lax: numbers written as strings
    _line(seed=3.0, attempts=2.0),
    _line(from_cache=1, text_escaped="true", seed=True),
    _line(schema_version=_DROP, runner_seed=_DROP, node=_DROP, rate_limited=_DROP),
    _line(schema_version=1),
    _line(output="caf\u00e9 \u2603 \\udcff escaped", text_escaped=True),
    _line(output='line\nbreak\ttab "quoted" \\ back'),
    _line(seed=2**70),
    _line(runner_seed=1_000_007),
    '{"scenario": "first", ' + json.dumps(USUAL)[1:],  # a key twice: the last one counts
    _line(duration_s=float("inf")),  # written as Infinity
    _line(duration_s=1.0).replace('"duration_s": 1.0', '"duration_s": 1e400'),
    _line(duration_s=float("nan"), cost={"usd": float("nan")}),
    _line(cost={"usd": 0.25, "tokens": 10.0}),
    _line(cost={}, manifest={}),
    "  " + json.dumps(USUAL) + "  ",
    json.dumps(USUAL, indent=2),
]

INVALID = [
    "",
    "not json",
    json.dumps(USUAL)[:-5],  # torn
    "[1, 2]",
    "null",
    _line(extra_key=1),
    _line(seed=None),
    _line(seed=1.5),
    _line(scenario=3),
    _line(schema_version=7),
    _line(output=_DROP),
    _line(error={"type": "X"}),
    _line(error={"type": "X", "message": "m", "more": 1}),
    _line(error="boom"),
    _line(cost={"tokens": "many"}),
    _line(cost=[1, 2]),
    _line(manifest=[1]),
    _line(duration_s=None),
    _line(finished_at=5),
    _line(from_cache="perhaps"),
    '{"scenario": "\\ud800"}',
    _line(output="x").replace('"x"', '"\\ud800"'),  # a JSON escape of a lone surrogate
    b'{"scenario": "\xff"}'.decode("latin-1"),
]


def _model(line: str | bytes) -> RunRecord | str:
    try:
        return RunRecord.model_validate_json(line)
    except ValidationError as exc:
        return json.dumps(exc.errors(include_url=False), default=str)


def _same(a: RunRecord, b: RunRecord) -> None:
    assert a.model_fields_set == b.model_fields_set
    for name in RunRecord.model_fields:
        x, y = getattr(a, name), getattr(b, name)
        assert (repr(x), type(x)) == (repr(y), type(y)), name  # repr: nan equals nan
        if isinstance(x, dict):
            assert [(k, type(v)) for k, v in x.items()] == [(k, type(v)) for k, v in y.items()]
    assert a.model_dump_json() == b.model_dump_json()


@pytest.mark.parametrize("line", VALID)
@pytest.mark.parametrize("form", [str, str.encode])
def test_parse_run_gives_the_models_record(line: str, form: Any) -> None:
    expected = _model(form(line))
    assert isinstance(expected, RunRecord), expected
    _same(parse_run(form(line)), expected)


@pytest.mark.parametrize("line", VALID)
def test_brief_of_gives_the_models_fields(line: str) -> None:
    expected = _model(line)
    assert isinstance(expected, RunRecord)
    got = brief_of(line.encode())
    assert got == brief(expected)
    assert (type(got.seed), type(got.output)) == (type(expected.seed), type(expected.output))


@pytest.mark.parametrize("line", INVALID)
def test_a_line_the_model_refuses_is_refused_with_the_models_error(line: str) -> None:
    expected = _model(line)
    assert isinstance(expected, str), f"the model takes {line!r}"
    for decode in (parse_run, brief_of):
        with pytest.raises(ValidationError) as caught:
            decode(line)
        assert json.dumps(caught.value.errors(include_url=False), default=str) == expected


def test_a_usual_line_is_read_without_the_models_json_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # The speed is the point: the line a worker writes takes the fast path, not the fallback.
    def refuse(*_: Any, **__: Any) -> RunRecord:
        raise AssertionError("fell back to model_validate_json")

    monkeypatch.setattr(RunRecord, "model_validate_json", refuse)
    for line in (json.dumps(USUAL), VALID[1], _line(cost={"usd": 0.5}), _line(output=None)):
        assert brief_of(line).seed == 7
        assert parse_run(line.encode()).seed == 7
