"""Read-back records that are not this sweep's (issue 27 item 10): a ``runs.jsonl`` that keeps
its first line but splices in another sweep's lines was read back silently, and a record with
seed 10^15 allocated 1.78 PiB. A record of a scenario or arm no version of the sweep declared is
refused with its line number; a seed past the plan is ignored, never allocated.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from counterfact import RunContext, RunDirectoryError, compare_arms

ARMS = [{"id": "base"}, {"id": "alt", "facets": {"answer": "nope"}}]


def echo(ctx: RunContext) -> str:
    return str(ctx.arm.facets.get("answer", "yes"))


def sweep(out: Path, **kw: object) -> object:
    args: dict[str, object] = {"samples": 3, "reference": "yes", "comparator": "exact"}
    return compare_arms(ARMS, echo, executor="local", out=out, **(args | kw))  # type: ignore[arg-type]


def _splice(out: Path, **change: object) -> None:
    """Append a copy of the first record with ``change`` applied (another sweep's line)."""
    runs = out / "runs.jsonl"
    first = json.loads(runs.read_text().splitlines()[0])
    with runs.open("a") as fh:
        fh.write(json.dumps(first | change) + "\n")


@pytest.mark.parametrize("change", [{"scenario": "elsewhere"}, {"arm": "stranger"}])
def test_a_spliced_record_of_another_sweep_is_refused_with_its_line(
    tmp_path: Path, change: dict[str, object]
) -> None:
    out = tmp_path / "o"
    sweep(out)
    _splice(out, **change)
    with pytest.raises(RunDirectoryError, match=r"runs\.jsonl line 7: .* not part of this sweep"):
        sweep(out)


def test_records_of_a_removed_scenario_are_still_kept(tmp_path: Path) -> None:
    out = tmp_path / "o"
    scenarios = [{"id": "a", "reference": "yes"}, {"id": "b", "reference": "yes"}]
    compare_arms(
        ARMS, echo, samples=3, scenarios=scenarios, comparator="exact", executor="local", out=out
    )
    result = compare_arms(
        ARMS,
        echo,
        samples=3,
        scenarios=scenarios[:1],
        comparator="exact",
        executor="local",
        out=out,
    )
    assert {r.scenario for r in result.rows} == {"a"}  # type: ignore[attr-defined]


CHILD = textwrap.dedent(
    """
    import resource, sys
    from pathlib import Path
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    sys.path.insert(0, sys.argv[2])
    from tests.orchestrator.storage.test_foreign_records import sweep
    result = sweep(Path(sys.argv[1]))
    print(result.row("alt").samples, result.summary.execution.runs_reused)
    """
)


def test_a_record_with_seed_10_to_the_15_is_ignored_not_allocated(tmp_path: Path) -> None:
    out = tmp_path / "o"
    sweep(out)
    _splice(out, seed=10**15)
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(out), str(root)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["3", "6"]  # the seed past the plan is not a reused run
