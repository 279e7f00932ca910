"""docs/errors.md is what users really get: every case is rerun and the file must match."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from .error_cases import CASES, Case, run_case

ROOT = Path(__file__).resolve().parent.parent


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
def test_case_gets_a_clean_error(case: Case, tmp_path: Path) -> None:
    code, error = run_case(case, tmp_path)
    assert code == case.expect_code
    assert error.startswith(("error: ", "Error: ", "runs.jsonl error: RunnerReturnError: "))
    assert "Traceback" not in error
    if case.group == "config":
        assert not (tmp_path / "runs").exists() and not (tmp_path / "out").exists()


def test_docs_errors_md_is_current() -> None:
    expected = _generator().render()
    actual = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    assert actual == expected, "docs/errors.md is stale: run python scripts/gen_errors_doc.py"


def test_readme_counts_the_cases_there_are() -> None:
    # The README once said 42 while the file listed 47; the count comes from the cases now.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"`docs/errors.md` lists {len(CASES)} bad inputs" in readme
