"""``counterfact view`` as a command (issue 29): the real CLI in a subprocess on 127.0.0.1 and a
free port, stopped by Ctrl-C (SIGINT) as a user stops it; its one-line refusals."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from counterfact.orchestrator.cli.view import view
from counterfact.orchestrator.view.server import is_loopback

from ...helpers import invoke
from ...viewsweeps import make_folder

ROOT = Path(__file__).resolve().parents[3]
CLI = [sys.executable, "-m", "counterfact.orchestrator.cli"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_folder(tmp_path_factory.mktemp("cli") / "runs")


@contextmanager
def _serving(*args: str) -> Iterator[tuple[subprocess.Popen[str], list[str]]]:
    proc = subprocess.Popen(
        [*CLI, "view", *args, "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline()]
        if "compare" in " ".join(args):
            lines.append(proc.stdout.readline())
        yield proc, lines
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # only the server this test started
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


def test_the_command_serves_until_ctrl_c(runs: Path) -> None:
    with _serving(str(runs)) as (proc, lines):
        assert lines[0].startswith(f"counterfact view: {runs} at http://127.0.0.1:")
        url = lines[0].split(" at ")[1].split()[0]
        reply = httpx.get(url, timeout=30)
        assert reply.status_code == 200 and 'href="/sweep?run=after"' in reply.text
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
        assert proc.stderr is not None and "Traceback" not in proc.stderr.read()


def test_compare_serves_both_and_prints_the_comparison(runs: Path) -> None:
    with _serving(str(runs / "after"), "--compare", str(runs / "before")) as (_, lines):
        assert lines[1].startswith("compare: http://127.0.0.1:")
        url = lines[1].split("compare: ")[1].strip()
        assert url.endswith("/compare?a=compare%3A.&b=.")
        page = httpx.get(url, timeout=30).text
        assert "5 question verdict(s) changed" in page


def test_a_single_run_directory_is_served_as_itself(runs: Path) -> None:
    with _serving(str(runs / "after")) as (_, lines):
        url = lines[0].split(" at ")[1].split()[0]
        page = httpx.get(url + "sweep?run=.", timeout=30).text
        assert "<h1>after</h1>" in page


def test_a_port_in_use_is_one_line(runs: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = str(taken.getsockname()[1])
        done = subprocess.run(
            [*CLI, "view", str(runs), "--port", port],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"error: --host/--port: cannot listen on 127.0.0.1:{port}")
    assert done.stderr.count("\n") == 1


def test_a_non_loopback_host_is_warned_about(runs: Path) -> None:
    # 192.0.2.1 (TEST-NET-1) is no address of this machine: the warning comes, nothing listens
    code, out, err = invoke("view", str(runs), "--host", "192.0.2.1", "--port", "0")
    assert "counterfact view:" not in out
    assert code == 2
    warning, error = err.splitlines()
    assert warning.startswith("warning: --host 192.0.2.1 is not a loopback address: anyone")
    assert error.startswith("error: --host/--port: cannot listen on 192.0.2.1:0")
    assert [is_loopback(h) for h in ("127.0.0.1", "127.0.0.2", "::1", "localhost")] == [True] * 4
    assert [is_loopback(h) for h in ("0.0.0.0", "::", "192.168.1.2", "example.com")] == [False] * 4


BLOCKED = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"starlette", "uvicorn"}:
            raise ImportError(f"No module named {name!r}")
sys.meta_path.insert(0, Block())
from counterfact.orchestrator.cli import entry
sys.argv = ["counterfact", "view", sys.argv[1]]
entry()
"""


def test_without_the_extra_it_says_what_to_install(runs: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED, str(runs)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ | {"NO_COLOR": "1"},
    )
    assert done.returncode == 2
    assert done.stderr == (
        "error: counterfact view needs starlette and uvicorn: pip install 'counterfact[view]'\n"
    )


def test_a_missing_path_is_refused_by_the_parser(tmp_path: Path) -> None:
    code, _, err = invoke("view", str(tmp_path / "nope"))
    assert code == 2 and "does not exist" in err


def test_the_help_lists_view() -> None:
    code, out, _ = invoke("--help")
    assert code == 0 and "view" in out
    code, out, _ = invoke("view", "--help")
    assert code == 0 and "--compare" in out and "127.0.0.1" in out


HEAVY_PROBE = """
import json, sys
from pathlib import Path
import httpx
from counterfact.orchestrator.cli import main
from counterfact.orchestrator.view.app import build_app
from counterfact.orchestrator.view.catalog import Catalog
from starlette.testclient import TestClient
with TestClient(build_app(Catalog(Path(sys.argv[1])))) as c:
    for path in ("/", "/sweep?run=after", "/arm?run=after&arm=alt",
                 "/question?run=after&arm=alt&q=q1", "/compare?a=before&b=after"):
        assert c.get(path, headers={"host": "127.0.0.1"}).status_code == 200, path
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules}
                        & {"ray", "scipy", "numpy", "matplotlib", "pandas", "rapidfuzz"})))
"""


def test_serving_pages_imports_no_engine_or_statistics(runs: Path) -> None:
    # The viewer reads records only: a page costs neither Ray nor numpy/scipy to import.
    done = subprocess.run(
        [sys.executable, "-c", HEAVY_PROBE, str(runs)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_other_commands_do_not_import_the_server() -> None:
    probe = (
        "import sys\nfrom counterfact.orchestrator.cli import main\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'starlette', 'uvicorn'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_the_default_port_is_not_one_a_local_model_server_takes() -> None:
    # issue 39 item 6: 8765 collided with a common local model server's port
    (port,) = [p for p in view.params if p.name == "port"]
    assert port.default == 8377
    assert port.default not in (8000, 8080, 8765, 11434, 1234, 5000)
