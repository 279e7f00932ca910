"""``import inspect`` reads logs under size limits (issue 27 item 8): a 4 MB zip bomb reached
4.4 GB before failing and a 100 MB completion took 3.5 GB. Each case runs the CLI in a child
with a 2 GiB address-space limit and a hard timeout: a one-line error (exit 2), never a
``MemoryError``, a traceback or a hang.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import Generate, TaskState, solver

HARD_TIMEOUT_S = 120

CHILD = textwrap.dedent(
    """
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    from counterfact.orchestrator.importers import logguard
    for setting in sys.argv[3:]:
        name, value = setting.split("=")
        setattr(logguard, name, int(value))
    from counterfact.orchestrator.cli import entry
    log, out = sys.argv[1], sys.argv[2]
    sys.argv = ["counterfact", "import", "inspect", "--arm", "a=" + log, "--arm", "b=" + log,
                "--baseline", "a", "--out", out]
    entry()
    """
)


@solver
def _answer():  # type: ignore[no-untyped-def]
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.output.completion = f"The answer is {state.target.text}."
        return state

    return solve


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("inspect-limits")
    dataset = [Sample(id=f"q{i}", input=f"{i}+{i}?", target=str(2 * i)) for i in range(3)]
    task = Task(dataset=dataset, solver=_answer(), scorer=includes(), epochs=2)
    (written,) = eval(task, model="mockllm/model", log_dir=str(folder), display="none")
    return Path(written.location)


def imported(log: Path, tmp_path: Path, *settings: str) -> tuple[int, str]:
    """(exit code, stderr) of ``counterfact import inspect`` on ``log``, in a child."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(log), str(tmp_path / "out"), *settings],
        capture_output=True,
        text=True,
        timeout=HARD_TIMEOUT_S,
    )
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return done.returncode, done.stderr.strip()


def _rewrite(log: Path, dest: Path, member: str, data: bytes) -> Path:
    """``log`` with ``member`` replaced by ``data`` (deflated: the stdlib reads it)."""
    with zipfile.ZipFile(log) as src, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            body = data if info.filename == member else src.read(info.filename)
            out.writestr(info.filename, body, compresslevel=1)
    return dest


def _declare_size(path: Path, member: str, size: int) -> None:
    """Forge ``member``'s uncompressed size in the central directory (the data stays small)."""
    raw = bytearray(path.read_bytes())
    at = 0
    while True:
        at = raw.index(b"PK\x01\x02", at)
        name_len = struct.unpack_from("<H", raw, at + 28)[0]
        if raw[at + 46 : at + 46 + name_len].decode() == member:
            struct.pack_into("<I", raw, at + 24, size)
            break
        at += 4
    path.write_bytes(bytes(raw))


def test_a_header_declaring_a_huge_entry_is_refused_unread(log: Path, tmp_path: Path) -> None:
    forged = tmp_path / "forged.eval"
    forged.write_bytes(log.read_bytes())
    _declare_size(forged, "samples/q1_epoch_2.json", 0xFFFF_FFF0)
    code, err = imported(forged, tmp_path)
    assert code == 2, err
    assert err.startswith("error: LOG: ") and "\n" not in err
    assert "sample 'q1' (epoch 2) declares 4,294,967,280 bytes, more than the 64 MiB" in err


def test_a_100_mb_completion_is_one_line_in_bounded_memory(log: Path, tmp_path: Path) -> None:
    member = "samples/q0_epoch_1.json"
    with zipfile.ZipFile(log) as src:
        sample = json.loads(src.read(member))
    sample["output"]["completion"] = "a" * 100_000_000
    bomb = _rewrite(log, tmp_path / "bomb.eval", member, json.dumps(sample).encode())
    assert bomb.stat().st_size < 2_000_000  # a small file that decompresses to 100 MB
    code, err = imported(bomb, tmp_path)
    assert code == 2, err
    assert "sample 'q0' (epoch 1) declares" in err and "\n" not in err


def test_too_many_entries_are_refused(log: Path, tmp_path: Path) -> None:
    code, err = imported(log, tmp_path, "MAX_ENTRIES=3")
    assert code == 2, err
    assert "entries, more than 3;" in err and "\n" not in err


def test_entries_declaring_too_much_in_total_are_refused(log: Path, tmp_path: Path) -> None:
    code, err = imported(log, tmp_path, "MAX_TOTAL_BYTES=1000")
    assert code == 2, err
    assert "uncompressed, more than" in err and "zip bomb" in err


def test_a_completion_over_the_limit_names_the_sample(log: Path, tmp_path: Path) -> None:
    code, err = imported(log, tmp_path, "MAX_COMPLETION_CHARS=5")
    assert code == 2, err
    assert "sample 'q0' (epoch 1) has a 16-character completion, more than the 5" in err


def test_a_json_log_over_the_limit_is_refused_unread(tmp_path: Path) -> None:
    huge = tmp_path / "huge.json"
    with huge.open("wb") as handle:
        handle.truncate(4097)  # sparse: nothing is written
    code, err = imported(huge, tmp_path, "MAX_JSON_LOG_BYTES=4096")
    assert code == 2, err
    assert "holds 4,097 bytes, more than the 4,096 allowed" in err and "\n" not in err
