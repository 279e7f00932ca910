"""Regenerate docs/errors.md by running every case in tests/error_cases.py.

python scripts/gen_errors_doc.py
"""

from __future__ import annotations

import difflib
import re
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.error_cases import BASE, CASES, Case, run_case  # noqa: E402

HEADER = """\
# Bad input and the errors it gets

Every row was produced by running the input for real (`python scripts/gen_errors_doc.py`);
`tests/test_errors_doc.py` reruns each one and fails if this file is out of date. Config and CLI
errors print one line on stderr and exit with code 2 before any run is spent, creating no run
directory (a misused option gets click's usage message, of which the table shows the last
line). A bad runner *return* is recorded as a failed run, with the error and its traceback, in
`runs.jsonl`; since it would be the same on every run, scheduling stops once the first run of
every arm failed alike (or after 3 such runs), what ran is kept, and the command exits 1.

`runner:` names code that counterfact imports and executes, exactly as `import` would: only point
it at code you trust. YAML is read with `yaml.safe_load` (no object construction).

The base config the config rows change:

```yaml
{base}```

"""


def _input(case: Case) -> str:
    if case.returns is not None:
        return f"runner returns `{case.returns}`"
    if case.raw is not None:
        return f"a file holding the bytes `{case.raw!r}`"
    if case.group in {"cli", "records"}:
        command = (
            "`counterfact "
            + " ".join(case.args)
            .replace("{cfg}", "sweep.yaml")
            .replace("{dir}/", "")
            .replace("{dir}", "DIR")
            + "`"
        )
        if case.planted:
            return f"{command} with {case.planted}"
        if case.group == "records" and case.config != BASE:
            changed = _input(Case(case.what, case.config))
            return f"{command} with {changed}"
        return command
    if case.suffix != ".yaml":
        return f"the base config saved as `sweep{case.suffix}`"
    if case.config == BASE:
        return "the base config"
    shared = set(BASE.splitlines()) & set(case.config.splitlines())
    if len(shared) < len(BASE.splitlines()) - 2:
        return "the file `" + case.config.strip().replace("\n", "⏎") + "`"
    added = [
        line[1:].strip()
        for line in difflib.ndiff(BASE.splitlines(), case.config.splitlines())
        if line.startswith("+ ")
    ]
    removed = [
        line[1:].strip()
        for line in difflib.ndiff(BASE.splitlines(), case.config.splitlines())
        if line.startswith("- ")
    ]
    if not added and removed:
        return "without `" + "`, `".join(removed) + "`"
    if removed:
        return "`" + "`⏎`".join(removed) + "` → `" + "`⏎`".join(added) + "`"
    return "`" + "`⏎`".join(added) + "`"


def _squeezed(text: str) -> str:
    """Long runs of one character (a 5,000-character path) shown as ``x…(5000×)``."""
    return re.sub(r"(.)\1{39,}", lambda m: f"{m.group(1)}…({len(m.group(0))}×)", text)


def run_all(done: Mapping[str, tuple[int, str]] | None = None) -> list[tuple[int, str]]:
    """Every case's (exit code, error), in table order; a case already in ``done`` (by its
    ``what``) is not run again (the test suite runs each case once and renders from that)."""
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, case in enumerate(CASES, 1):
            if done is not None and case.what in done:
                results.append(done[case.what])
            else:
                results.append(run_case(case, Path(tmp) / f"case{i}"))
    return results


def render(results: Sequence[tuple[int, str]] | None = None) -> str:
    """docs/errors.md from each case's (exit code, error); run them when not given."""
    rows = ["| # | what is wrong | input | exit | exact error |", "|---|---|---|---|---|"]
    for i, (case, (code, error)) in enumerate(zip(CASES, results or run_all(), strict=True), 1):
        cell = error.replace("|", "\\|")
        shown = _squeezed(_input(case)).replace("|", "\\|")
        rows.append(f"| {i} | {case.what} | {shown} | {code} | `{cell}` |")
    return HEADER.format(base=BASE) + "\n".join(rows) + "\n"


def main() -> int:
    (ROOT / "docs" / "errors.md").write_text(render(), encoding="utf-8")
    print(f"wrote docs/errors.md ({len(CASES)} cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
