"""Property: whatever a config file holds, loading gives a sweep or our ConfigError, never a
traceback of anything else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from counterfact import ConfigError
from counterfact.orchestrator.loading import validate_config
from counterfact.orchestrator.resolve import ResolvedSweep, resolve_sweep

from ..conftest import TESTS

RUNNER = f"{TESTS / 'runners.py'}:echo_arm"
KEYS = [
    "name",
    "runner",
    "samples",
    "baseline",
    "arms",
    "scenarios",
    "reference",
    "comparator",
    "similarity",
    "executor",
    "output_dir",
    "ablate_each",
    "grid",
    "cost_key",
    "bisect",
    "runner_version",
    "cache_dir",
    "unknown",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 6),
    st.floats(allow_nan=True),
    st.text(max_size=6),
    st.sampled_from(["base", "alt", "x.y", "similarity", "ray", "local", RUNNER]),
)
json_like = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
arm = st.fixed_dictionaries(
    {"id": st.one_of(st.sampled_from(["base", "alt", "b", " "]), scalars)},
    optional={
        "facets": st.one_of(
            st.dictionaries(st.sampled_from(["m", "a.b", "a", "k"]), json_like, max_size=3),
            json_like,
        ),
        "ablations": st.one_of(st.lists(st.sampled_from(["t1", "t2", ""]), max_size=3), json_like),
        "restorations": json_like,
        "extra": json_like,
    },
)
section = st.one_of(
    json_like,
    st.fixed_dictionaries(
        {},
        optional={
            "kind": st.sampled_from(
                ["similarity", "exact", "numeric", "custom", "text", "ray", "local", "bad"]
            ),
            "threshold": scalars,
            "tolerance": scalars,
            "target": scalars,
            "address": scalars,
            "max_in_flight": scalars,
            "retries": scalars,
            "retry_on": json_like,
            "timeout_s": scalars,
            "suspects": st.lists(st.sampled_from(["t1", "t2", "t1"]), max_size=3),
        },
    ),
)
VALID: dict[str, Any] = {
    "name": "p",
    "runner": RUNNER,
    "arms": [{"id": "base"}, {"id": "alt", "facets": {"answer": "nope"}}],
    "bisect": {"suspects": ["t1", "t2"]},
}
mutation = st.one_of(
    st.tuples(
        st.just("set"),
        st.sampled_from(KEYS),
        st.one_of(json_like, st.lists(arm, max_size=4), section),
    ),
    st.tuples(st.just("drop"), st.sampled_from(KEYS), st.none()),
    st.tuples(st.just("arm"), st.integers(0, 1), arm),
)


def mutate(changes: list[tuple[str, Any, Any]]) -> dict[str, Any]:
    raw: dict[str, Any] = {k: (list(v) if isinstance(v, list) else v) for k, v in VALID.items()}
    for op, key, value in changes:
        if op == "set":
            raw[key] = value
        elif op == "drop":
            raw.pop(key, None)
        elif isinstance(raw.get("arms"), list) and len(raw["arms"]) > key:
            raw["arms"][key] = value
    return raw


configs = st.lists(mutation, max_size=3).map(mutate)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=configs)
def test_loader_gives_a_sweep_or_a_config_error(raw: dict[str, Any]) -> None:
    text = yaml.safe_dump(raw, allow_unicode=True)
    data = yaml.safe_load(text)  # the same round trip a file takes
    for for_bisect in (False, True):
        try:
            config = validate_config(data)
            sweep = resolve_sweep(config, base_dir=Path(TESTS), for_bisect=for_bisect)
        except ConfigError as exc:
            assert str(exc)  # noqa: PT017 - a message, naming what is wrong
        else:
            assert isinstance(sweep, ResolvedSweep)


snippets = st.sampled_from(
    [
        "name: p\n",
        f"runner: {RUNNER}\n",
        "arms: [{id: base}, {id: alt, facets: {answer: nope}}]\n",
        "arms: [{id: a, facets: &f {x: *f}}, {id: b}]\n",
        "samples: &n 3\nreference: *n\n",
        "comparator: {kind: numeric}\nreference: 'x'\n",
        "scenarios: [{id: s, inputs: {q: [1, {r: 2}]}}]\n",
        "grid: {answer: [a, b]}\n",
        "ablate_each: [t1, t2]\n",
        "bisect: {suspects: [t1]}\n",
        "executor: {kind: local, retries: 1}\n",
        "- just\n- a list\n",
        ": : :\n",
        "\t\tbad indent\n",
        "name: [unclosed\n",
    ]
)
documents = st.one_of(
    st.lists(snippets, max_size=6).map("".join),
    st.text(max_size=80),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=documents, raw_bytes=st.binary(max_size=40), as_bytes=st.booleans())
def test_any_file_gives_a_sweep_or_a_config_error(
    text: str, raw_bytes: bytes, as_bytes: bool
) -> None:
    import tempfile

    from counterfact.orchestrator.loading import load_sweep

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sweep.yaml"
        if as_bytes:
            path.write_bytes(raw_bytes)
        else:
            path.write_text(text, encoding="utf-8")
        for for_bisect in (False, True):
            try:
                sweep = load_sweep(path, for_bisect=for_bisect)
            except ConfigError as exc:
                assert str(exc)  # noqa: PT017 - a message, naming what is wrong
            else:
                assert isinstance(sweep, ResolvedSweep)
