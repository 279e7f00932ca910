"""Property: whatever a config file holds, loading gives a sweep or our ConfigError, never a
traceback of anything else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from counterfact import ConfigError
from counterfact.orchestrator.config.loading import validate_config
from counterfact.orchestrator.config.resolve import (
    ResolvedBisect,
    ResolvedSweep,
    resolve_bisect,
    resolve_sweep,
)

from ...conftest import TESTS

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


def _check_resolved(resolved: ResolvedSweep | ResolvedBisect) -> None:
    """What resolution guarantees: a baseline among the arms, scenarios, and for a culprit
    search the section, a non-empty suspect list none of which the baseline already ablates."""
    sweep = resolved if isinstance(resolved, ResolvedSweep) else resolved.sweep
    assert sweep.baseline in {a.id for a in sweep.arms}
    assert sweep.scenarios and sweep.config.samples >= 2
    if isinstance(resolved, ResolvedBisect):
        assert resolved.base.id == sweep.baseline
        assert resolved.settings.suspects
        assert not set(resolved.settings.suspects) & set(resolved.base.ablations)
        assert resolved.scenario in sweep.scenarios
    else:
        assert len(sweep.arms) >= 2


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=configs)
def test_loader_gives_a_sweep_or_a_config_error(raw: dict[str, Any]) -> None:
    text = yaml.safe_dump(raw, allow_unicode=True)
    data = yaml.safe_load(text)  # the same round trip a file takes
    for resolve in (resolve_sweep, resolve_bisect):
        try:
            config = validate_config(data)
            resolved = resolve(config, base_dir=Path(TESTS))
        except ConfigError as exc:
            assert str(exc)  # noqa: PT017 - a message, naming what is wrong
        else:
            _check_resolved(resolved)


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

    from counterfact.orchestrator.config.loading import load_bisect, load_sweep

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sweep.yaml"
        if as_bytes:
            path.write_bytes(raw_bytes)
        else:
            path.write_text(text, encoding="utf-8")
        for load in (load_sweep, load_bisect):
            try:
                resolved = load(path)
            except ConfigError as exc:
                assert str(exc)  # noqa: PT017 - a message, naming what is wrong
            else:
                _check_resolved(resolved)
