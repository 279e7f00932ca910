"""docs/errors.md is what users really get: every case is rerun and the file must match."""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

import pytest

from .error_cases import CASES, Case, run_case

ROOT = Path(__file__).resolve().parent.parent

# every case runs once: its test keeps what it got, and the docs check renders from that (a case
# the docs check finds missing, e.g. under -k or on another xdist worker, it runs itself)
_GOT: dict[str, tuple[int, str]] = {}


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "gen_errors_doc", ROOT / "scripts" / "gen_errors_doc.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_at_least_25_cases() -> None:
    assert len(CASES) >= 25
    assert len({c.what for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.what for c in CASES])
def test_case_gets_a_clean_error(case: Case) -> None:
    # in the folder render() would use (an error may depend on its path's length)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp) / f"case{CASES.index(case) + 1}"
        code, error = run_case(case, tmp_path)
        ran = (tmp_path / "runs").exists() or (tmp_path / "out").exists()
    _GOT[case.what] = (code, error)
    assert code == case.expect_code
    assert error.startswith(
        ("error: ", "Error: ", "runs.jsonl error: RunnerReturnError: ", "verdicts.jsonl reason ")
    )
    assert "Traceback" not in error
    if case.group == "config":
        assert not ran


def test_docs_errors_md_is_current() -> None:
    generator = _generator()
    expected = generator.render(generator.run_all(_GOT))
    actual = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    assert actual == expected, "docs/errors.md is stale: run python scripts/gen_errors_doc.py"


def test_readme_counts_the_cases_there_are() -> None:
    # The README once said 42 while the file listed 47; the count comes from the cases now.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"`docs/errors.md` lists {len(CASES)} bad inputs" in readme
