"""picire's file-based reduction cases (its tests/test_cli.py and tests/resources), translated into
ablation suspects (issue 20 item 6): each line (or character) of the input is a suspect, a probe
ablates a set, and it flips when the kept text is "interesting" by picire's own test script. The
inputs and expected outputs are copied from picire's resources (BSD 3-Clause,
github.com/renatahodovan/picire); the scripts' checks are restated in Python (the grep over the
program's stdout and stderr becomes a search in the captured output and the exception's text).
With ``max_culprits: 1`` the bisection's set must be exactly picire's expected reduction."""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections.abc import Callable

import pytest

from .test_search import run

SUMPROD = (
    "#!/usr/bin/env python3\n\ns = 0\np = 1\nfor i in range(1, 11):\n    s += i\n    p *= i\n\n"
    "print(f'sum: {s}')\nprint(f'prod: {p}')\n"
)
EXTRA_COMMA = '{\n  "foo": "foo",\n  "bar": "bar",\n  "baz": "baz",\n}\n'
INVALID_ESCAPE = '{\n  "tnt": "bff\\xrtf"\n}\n'


def _python_output(text: str) -> str:
    """What ``python FILE 2>&1`` shows for ``text``, enough for picire's greps: the printed lines
    and, if it raised, the exception's type and message."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(text, "<reduced>", "exec"), {})
        except Exception as exc:  # a failing reduction is an output too
            print(f"{type(exc).__name__}: {exc}")
    return out.getvalue()


def _json_output(text: str) -> str:
    """What picire's sut-json-load.py shows: the loaded value, or the decoder's error."""
    try:
        return repr(json.loads(text))
    except json.JSONDecodeError as exc:
        return f"json.decoder.JSONDecodeError: {exc}"


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _chars(text: str) -> list[str]:
    return list(text)


CASES: list[tuple[str, str, Callable[[str], list[str]], Callable[[str], bool], str]] = [
    # test-sumprod10-sum.sh: python $1 | grep -q "sum: 55"; exp-sumprod10-sum.py
    (
        "sumprod10-sum",
        SUMPROD,
        _lines,
        lambda t: "sum: 55" in _python_output(t),
        "s = 0\nfor i in range(1, 11):\n    s += i\nprint(f'sum: {s}')\n",
    ),
    # test-sumprod10-prod.sh: grep -q "prod: 3628800"; exp-sumprod10-prod.py
    (
        "sumprod10-prod",
        SUMPROD,
        _lines,
        lambda t: "prod: 3628800" in _python_output(t),
        "p = 1\nfor i in range(1, 11):\n    p *= i\nprint(f'prod: {p}')\n",
    ),
    # test-json-extra-comma.sh: grep -E "Expecting property name|Expecting object|Illegal
    # trailing comma"; exp-extra-comma.json
    (
        "json-extra-comma",
        EXTRA_COMMA,
        _lines,
        lambda t: bool(
            re.search(
                "Expecting property name|Expecting object|Illegal trailing comma", _json_output(t)
            )
        ),
        "{\n",
    ),
    # test-json-invalid-escape.sh: grep 'Error: Invalid \\escape:' with --atom=char;
    # exp-invalid-escape.json
    (
        "json-invalid-escape",
        INVALID_ESCAPE,
        _chars,
        lambda t: "Error: Invalid \\escape:" in _json_output(t),
        '"\\x',
    ),
]


@pytest.mark.parametrize(
    ("name", "text", "atoms", "interesting", "expect"), CASES, ids=[c[0] for c in CASES]
)
def test_picire_file_cases_reduce_to_picire_s_expected_output(
    name: str,
    text: str,
    atoms: Callable[[str], list[str]],
    interesting: Callable[[str], bool],
    expect: str,
) -> None:
    parts = atoms(text)
    names = [f"a{i:03d}" for i in range(len(parts))]

    def kept(ids: frozenset[str]) -> str:
        return "".join(p for n, p in zip(names, parts, strict=True) if n in ids)

    assert interesting(text) and not interesting("")  # the case is what picire's script says
    o, _ = run(names, lambda ids, seed: interesting(kept(ids)), max_culprits=1, max_probes=600)
    assert o.verdict == "confirmed", (name, o.reason)
    (culprit,) = o.culprits
    assert kept(frozenset(culprit)) == expect
    (check,) = o.checks
    assert check.one_minimal
