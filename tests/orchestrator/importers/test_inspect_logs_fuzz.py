"""Fuzz: damaged Inspect AI logs through ``counterfact import inspect`` (issue 27: the fuzz
test covers logs). Real ``.eval`` logs are written by ``inspect_ai.eval`` (mockllm), then
damaged at the byte level (flips, cuts, splices inside the zip) or, inside the zip, at the JSON
level (a sample's fields replaced by hostile values). Every case must end in exit 0, 1 or 2
within a time bound, with no traceback on stderr.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

HOSTILE = [None, 1e308, -1, "", "\x00" * 10, "\udcff", [], {}, {"a": [{}] * 50}, "x" * 100_000]


@pytest.fixture(scope="session")
def pair(logs: dict[str, Path]) -> tuple[Path, Path]:
    """The good and the bad task's logs (the session's, from conftest)."""
    return logs["good"], logs["bad"]


def _judge(baseline: Path, damaged: Path, out: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "counterfact.orchestrator.cli", "import", "inspect"]
    cmd += [str(baseline), str(damaged), "--baseline", "good", "--out", str(out), "--no-report"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


def _check(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode in (0, 1, 2), done.stderr[-2000:]
    assert "Traceback" not in done.stderr, done.stderr[-2000:]


def _rezip(source: Path, target: Path, edit: int, value: object) -> None:
    """Copy the zip, replacing one top-level field of one sample's JSON with ``value``."""
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
        names = zin.namelist()
        samples = [n for n in names if n.startswith("samples/")]
        chosen = samples[edit % len(samples)] if samples else None
        for name in names:
            data = zin.read(name)
            if name == chosen:
                record = json.loads(data)
                keys = sorted(record)
                record[keys[edit % len(keys)]] = value
                data = json.dumps(record).encode()
            zout.writestr(name, data)


@settings(
    max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    at=st.integers(min_value=0, max_value=10**9),
    cut=st.booleans(),
    junk=st.binary(min_size=1, max_size=64),
)
def test_byte_damage_never_gives_a_traceback(
    pair: tuple[Path, Path],
    tmp_path_factory: pytest.TempPathFactory,
    at: int,
    cut: bool,
    junk: bytes,
) -> None:
    baseline, other = pair
    raw = bytearray(other.read_bytes())
    spot = at % len(raw)
    damaged = raw[:spot] if cut else raw[:spot] + junk + raw[spot + len(junk) :]
    folder = tmp_path_factory.mktemp("case")
    path = folder / other.name
    path.write_bytes(bytes(damaged))
    _check(_judge(baseline, path, folder / "o"))


@settings(
    max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(edit=st.integers(min_value=0, max_value=10**6), value=st.sampled_from(HOSTILE))
def test_hostile_sample_fields_never_give_a_traceback(
    pair: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory, edit: int, value: object
) -> None:
    baseline, other = pair
    folder = tmp_path_factory.mktemp("case")
    path = folder / other.name
    try:
        _rezip(other, path, edit, value)
    except (UnicodeEncodeError, ValueError):  # a lone surrogate cannot be written as UTF-8
        path.write_bytes(io.BytesIO(other.read_bytes()).getvalue())
    _check(_judge(baseline, path, folder / "o"))


@settings(
    max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(megabytes=st.sampled_from([2, 80, 400]))
def test_an_entry_lying_about_its_size_never_hangs(
    pair: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory, megabytes: int
) -> None:
    # issue 45 item 2: a sample declaring 1,000 bytes that inflates to megabytes
    from .test_logguard import _bomb

    baseline, other = pair
    folder = tmp_path_factory.mktemp("case")
    path = _bomb(other, folder / other.name, megabytes << 20)
    done = _judge(baseline, path, folder / "o")
    _check(done)
    assert done.returncode == 2 and "inflate" in done.stderr, done.stderr[-2000:]
