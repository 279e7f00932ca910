"""Fuzz: mutated sweep *files* through the CLI (issue 18 item 10). Every case ends in exit 0 or
2 with one ``error:`` line, within a time bound, without a traceback and without writing a run
directory. The mutations are the shapes the attack on main found (alias bombs, tags, nesting,
huge numbers, surrogates, duplicate keys) spliced into a valid file, plus byte-level damage.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.error_cases import AGENT, BASE, BOMB_TEXT
from tests.helpers import invoke

SNIPPETS = [
    BOMB_TEXT,
    "samples: !!int 0x1F demo\n",
    "x: !!timestamp 2020-99-99\n",
    "x: !!python/object:os.system ls\n",
    "deep: " + "[" * 300 + "]" * 300 + "\n",
    "samples: 100000000000\n",
    "sequential: {max_samples: 100000000000}\n",
    "grid: {" + ", ".join(f"g{i}: [0,1,2,3,4,5,6,7,8,9]" for i in range(7)) + "}\n",
    "comparator: {kind: numeric, tolerance: .nan}\n",
    "comparator: {kind: regex, pattern: '(a+)+$'}\nreference: '" + "a" * 40 + "!'\n",
    "comparator: {kind: regex, pattern: '(a|a)+$'}\nreference: '" + "a" * 40 + "!'\n",
    'name: "\\udcff"\n',
    "name: '..'\n",
    "name: again\n",
    "samples: 5\nsamples: 6\n",
    "a: &a {b: *a}\n",
    "runner: " + "x" * 5000 + ".py:run\n",
    "executor: {kind: local, address: auto}\n",
    "arms: 7\n",
    "\t\x00\n",
]

BOUND_S = 10.0
"""Seconds one case may take (the slowest legitimate check, the regex bound, is 2 s)."""


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    picks=st.lists(st.sampled_from(SNIPPETS), min_size=1, max_size=3),
    cut=st.integers(min_value=0, max_value=len(BASE)),
    damage=st.binary(max_size=4),
)
def test_a_mutated_sweep_file_is_a_sweep_or_one_error_line(
    tmp_path_factory: object, picks: list[str], cut: int, damage: bytes
) -> None:
    folder = Path(tmp_path_factory.mktemp("fuzz"))  # type: ignore[attr-defined]
    (folder / "agent.py").write_text(AGENT.replace("RETURN", "None"), encoding="utf-8")
    text = BASE[:cut] + damage.decode("latin-1") + BASE[cut:] if damage else BASE
    cfg = folder / "sweep.yaml"
    cfg.write_text(text + "".join(picks), encoding="utf-8", errors="surrogateescape")
    started = time.monotonic()
    code, out, err = invoke("validate", str(cfg))
    took = time.monotonic() - started
    assert took < BOUND_S, f"{took:.1f} s for {picks!r}"
    assert code in (0, 2), (code, out, err)
    assert "Traceback" not in out + err
    if code == 2:
        errors = [line for line in err.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, err
    assert not (folder / "runs").exists()  # validate writes no run directory


SCENARIO_SNIPPETS = {
    "jsonl": [
        '{"id": "a", "inputs": {"x": ' + "[" * 5000 + "]" * 5000 + "}}\n",
        '{"id": "b", "inputs": {"q": "' + "x" * 200_000 + '"}}\n',
        '{"id": "c", "reference": 42}\n',
        '{"id": 1.5}\n',
        '{"id": "d\\u0000", "inputs": {"q": "\\u0001"}}\n',
        '["not", "an", "object"]\n',
        "{not json\n",
        '{"id": "e", "inputs": 7}\n',
        '{"id": "p", "reference": "x", "expect": {"kind": "custom", "target": "evil.py:boom"}}\n',
    ],
    "yaml": [
        "- {id: a, inputs: {x: " + "[" * 5000 + "]" * 5000 + "}}\n",
        "- {id: b, inputs: {flag: on}}\n",
        "- {id: 010}\n",
        "- {id: c, reference: 1.5}\n",
        '- {id: "d\x01"}\n',
        "- &a [*a]\n",
        "- {id: e, inputs: {q: " + "y" * 200_000 + "}}\n",
        "x: 1\n",
        "- {id: p, reference: x, expect: evil.py:boom}\n",
    ],
}

EVIL = """\
import pathlib
pathlib.Path(__file__).with_name("PWNED").write_text("imported")

def boom(reference, output):
    return True
"""
"""A check a hostile question names: it leaves a marker file if it is ever imported."""

HARD_TIMEOUT_S = 60.0
"""A scenario-file case runs in its own interpreter, killed after this: a hang fails the test."""


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    kind=st.sampled_from(sorted(SCENARIO_SNIPPETS)),
    picks=st.lists(st.integers(min_value=0, max_value=8), min_size=1, max_size=3),
    damage=st.binary(max_size=3),
)
def test_a_hostile_scenario_file_is_a_sweep_or_one_error_line(
    tmp_path_factory: object, kind: str, picks: list[int], damage: bytes
) -> None:
    folder = Path(tmp_path_factory.mktemp("fuzzsc"))  # type: ignore[attr-defined]
    (folder / "agent.py").write_text(AGENT.replace("RETURN", "None"), encoding="utf-8")
    (folder / "evil.py").write_text(EVIL, encoding="utf-8")  # a question may never import it
    body = "".join(SCENARIO_SNIPPETS[kind][i] for i in picks)
    (folder / f"set.{kind}").write_bytes(body.encode("utf-8", "surrogateescape") + damage)
    cfg = folder / "sweep.yaml"
    cfg.write_text(BASE + f"scenarios: {{file: set.{kind}}}\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "counterfact.orchestrator.cli", "validate", str(cfg)],
        capture_output=True,
        text=True,
        timeout=HARD_TIMEOUT_S,
        cwd=folder,
    )
    assert done.returncode in (0, 2), (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stdout + done.stderr
    assert not (folder / "PWNED").exists(), "a question file ran code"
    if done.returncode == 2:
        errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, done.stderr[-2000:]
