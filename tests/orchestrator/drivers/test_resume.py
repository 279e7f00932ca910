"""Resume, the run cache and retries, on the in-process executor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from counterfact import ResumeConflictError, RunContext, RunDirectoryError, compare_arms
from counterfact.exceptions import RunsFailed
from counterfact.orchestrator.config.loading import validate_config
from counterfact.orchestrator.config.resolve import resolve_sweep
from counterfact.orchestrator.drivers.sweep import run_sweep
from counterfact.orchestrator.storage.recordfiles import RunLogReader

ARMS = [{"id": "base"}, {"id": "alt", "facets": {"answer": "nope"}}]


class Counting:
    """echo_arm that logs every call as (scenario, arm, seed)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, int]] = []

    def __call__(self, ctx: RunContext) -> dict[str, object]:
        self.calls.append((ctx.scenario.id, ctx.arm.id, ctx.seed))
        return {"output": str(ctx.arm.facets.get("answer", "yes"))}


def sweep(runner: Counting, out: Path, **kw: object) -> object:
    arms = kw.pop("arms", ARMS)
    args: dict[str, object] = {"reference": "yes", "comparator": "exact", "executor": "local"}
    args.update(kw)
    return compare_arms(arms, runner, out=out, **args)  # type: ignore[arg-type]


def lines(out: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines()]


def test_raising_samples_runs_only_the_new_seeds(tmp_path: Path) -> None:
    first, second = Counting(), Counting()
    sweep(first, tmp_path / "o", samples=3)
    result = sweep(second, tmp_path / "o", samples=5)
    assert sorted(second.calls) == sorted(
        ("default", a, s) for a in ("base", "alt") for s in (3, 4)
    )
    assert result.summary.execution.runs_reused == 6 and result.summary.execution.runs_used == 4  # type: ignore[attr-defined]
    assert result.row("alt").samples == 5  # type: ignore[attr-defined]
    assert len(lines(tmp_path / "o")) == 10


def test_adding_an_arm_reuses_every_finished_run(tmp_path: Path) -> None:
    first, second = Counting(), Counting()
    sweep(first, tmp_path / "o")
    extra = [*ARMS, {"id": "third", "facets": {"answer": "maybe"}}]
    sweep(second, tmp_path / "o", arms=extra)
    assert {c[1] for c in second.calls} == {"third"}


def test_changed_facets_are_refused_with_the_difference(tmp_path: Path) -> None:
    sweep(Counting(), tmp_path / "o")
    changed = [{"id": "base"}, {"id": "alt", "facets": {"answer": "other"}}]
    with pytest.raises(ResumeConflictError, match=r'arms\[alt\]\.facets\.answer: "nope" → "other"'):
        sweep(Counting(), tmp_path / "o", arms=changed)


def test_changed_inputs_are_refused(tmp_path: Path) -> None:
    sweep(Counting(), tmp_path / "o", scenarios=[{"id": "s", "inputs": {"q": 1}}], reference=None)
    with pytest.raises(ResumeConflictError, match=r"scenarios\[s\]\.inputs\.q: 1 → 2"):
        sweep(
            Counting(), tmp_path / "o", scenarios=[{"id": "s", "inputs": {"q": 2}}], reference=None
        )


def test_changed_runner_is_refused_and_fresh_moves_aside(tmp_path: Path) -> None:
    runner_file = tmp_path / "agent.py"
    runner_file.write_text("def run(ctx):\n    return 'yes'\n")
    out = tmp_path / "o"
    kw = {"base_dir": tmp_path, "executor": "local", "reference": "yes", "comparator": "exact"}
    compare_arms(ARMS, "agent.py:run", out=out, **kw)  # type: ignore[arg-type]
    runner_file.write_text("def run(ctx):\n    return 'no'\n")
    with pytest.raises(ResumeConflictError, match=r"runner: was 'agent.py:run@sha256:"):
        compare_arms(ARMS, "agent.py:run", out=out, **kw)  # type: ignore[arg-type]
    config = validate_config(
        {"name": "x", "runner": "agent.py:run", "arms": ARMS, "executor": {"kind": "local"}}
    )
    result = run_sweep(resolve_sweep(config, base_dir=tmp_path), run_dir=out, fresh=True)
    assert result.summary.execution.runs_used == 6
    assert any(p.name.startswith("o.moved-") for p in tmp_path.iterdir())


def test_runner_version_pins_identity(tmp_path: Path) -> None:
    runner_file = tmp_path / "agent.py"
    runner_file.write_text("def run(ctx):\n    return 'yes'\n")
    raw = {
        "name": "x",
        "runner": "agent.py:run",
        "runner_version": "1",
        "arms": ARMS,
        "executor": {"kind": "local"},
    }
    run_sweep(resolve_sweep(validate_config(raw), base_dir=tmp_path), run_dir=tmp_path / "o")
    runner_file.write_text("def run(ctx):\n    return 'yes'  # comment only\n")
    again = run_sweep(
        resolve_sweep(validate_config(raw), base_dir=tmp_path), run_dir=tmp_path / "o"
    )
    assert again.summary.execution.runs_used == 0


def test_torn_last_line_is_dropped_and_reported(tmp_path: Path) -> None:
    first = Counting()
    sweep(first, tmp_path / "o")
    runs = tmp_path / "o" / "runs.jsonl"
    text = runs.read_text().splitlines()
    runs.write_text("\n".join(text[:-1]) + "\n" + text[-1][: len(text[-1]) // 2])
    second = Counting()
    result = sweep(second, tmp_path / "o")
    assert result.summary.execution.torn_line_dropped  # type: ignore[attr-defined]
    assert len(second.calls) == 1  # only the torn run is run again
    keys = [(r["scenario"], r["arm"], r["seed"]) for r in lines(tmp_path / "o")]
    assert len(keys) == len(set(keys)) == 6


def test_complete_last_line_without_newline_is_kept(tmp_path: Path) -> None:
    sweep(Counting(), tmp_path / "o")
    runs = tmp_path / "o" / "runs.jsonl"
    runs.write_text(runs.read_text().rstrip("\n"))
    reader = RunLogReader(runs)
    n = len(list(reader))
    assert reader.torn is False and n == 6
    second = Counting()
    sweep(second, tmp_path / "o", samples=4)
    assert len(lines(tmp_path / "o")) == 8


def test_corruption_before_the_last_line_is_refused(tmp_path: Path) -> None:
    sweep(Counting(), tmp_path / "o")
    runs = tmp_path / "o" / "runs.jsonl"
    text = runs.read_text().splitlines()
    text[1] = "{not json"
    runs.write_text("\n".join(text) + "\n")
    with pytest.raises(RunDirectoryError, match=r"line 2 is not a run record"):
        sweep(Counting(), tmp_path / "o")


def test_cache_shares_runs_across_sweeps(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = Counting()

    def go(runner: Counting, arms: list[dict[str, object]], out: Path) -> object:
        raw = {
            "name": "c",
            "runner": runner,
            "arms": arms,
            "reference": "yes",
            "comparator": {"kind": "exact"},
            "executor": {"kind": "local"},
            "cache_dir": str(cache),
        }
        return run_sweep(resolve_sweep(validate_config(raw), base_dir=tmp_path), run_dir=out)

    go(first, ARMS, tmp_path / "a")
    assert len(first.calls) == 6
    second = Counting()
    # Same configurations under new ids, plus one new arm: only the new arm runs.
    renamed = [
        {"id": "b0"},
        {"id": "b1", "facets": {"answer": "nope"}},
        {"id": "b2", "facets": {"answer": "x"}},
    ]
    result = go(second, renamed, tmp_path / "b")
    assert {c[1] for c in second.calls} == {"b2"}
    assert result.summary.execution.runs_from_cache == 6  # type: ignore[attr-defined]
    assert result.row("b1").runs_from_cache == 3  # type: ignore[attr-defined]
    cached = [r for r in lines(tmp_path / "b") if r["from_cache"]]
    assert {r["arm"] for r in cached} == {"b0", "b1"}


def test_retries_are_counted_and_reported(tmp_path: Path) -> None:
    flaky: dict[tuple[str, int], int] = {}

    def runner(ctx: RunContext) -> str:
        key = (ctx.arm.id, ctx.seed)
        flaky[key] = flaky.get(key, 0) + 1
        if key == ("alt", 1) and flaky[key] < 3:
            raise ConnectionError("transient")
        return "yes"

    result = compare_arms(
        ARMS,
        runner,
        reference="yes",
        comparator="exact",
        out=tmp_path / "o",
        executor={"kind": "local", "retries": 2, "retry_on": ["OSError"]},
    )
    assert result.row("alt").runs_retried == 1 and result.row("alt").samples == 3
    attempts = {(r["arm"], r["seed"]): r["attempts"] for r in lines(tmp_path / "o")}
    assert attempts[("alt", 1)] == 3 and attempts[("alt", 0)] == 1


def test_unlisted_exceptions_are_not_retried() -> None:
    calls = []

    def runner(ctx: RunContext) -> str:
        calls.append(ctx.seed)
        raise ValueError("deterministic")

    with pytest.raises(RunsFailed, match="the first run of every arm") as caught:
        compare_arms(
            ARMS,
            runner,
            reference="yes",
            executor={"kind": "local", "retries": 3, "retry_on": ["ConnectionError"]},
        )
    # one attempt each (ValueError is not listed), and the sweep stopped once every arm's first
    # run had failed the same way
    assert len(calls) == 2 and caught.value.recorded == 2


def test_bad_complete_last_line_is_corruption_not_a_torn_write(tmp_path: Path) -> None:
    sweep(Counting(), tmp_path / "o")
    runs = tmp_path / "o" / "runs.jsonl"
    runs.write_text(runs.read_text() + '{"schema_version": 99}\n')
    with pytest.raises(RunDirectoryError, match=r"line 7 is not a run record"):
        sweep(Counting(), tmp_path / "o")
    assert runs.read_text().endswith('{"schema_version": 99}\n')  # nothing was truncated


def test_one_writer_per_run_directory(tmp_path: Path) -> None:
    from counterfact.orchestrator.storage.rundir import RunStore

    with (
        RunStore(tmp_path / "o"),
        pytest.raises(RunDirectoryError, match="in use by another counterfact process"),
        RunStore(tmp_path / "o"),
    ):
        pass
    with RunStore(tmp_path / "o") as second:
        assert second.records == []


def test_a_scoring_error_records_every_run_first(tmp_path: Path) -> None:
    from counterfact import ScoringError

    def broken(reference: str, outputs: list[str]) -> list[float]:
        raise RuntimeError("embedding service down")

    with pytest.raises(ScoringError, match="embedding service down"):
        compare_arms(
            ARMS,
            Counting(),
            samples=300,
            reference="yes",
            similarity=broken,
            executor="local",
            out=tmp_path / "o",
        )
    assert len(lines(tmp_path / "o")) == 600  # every run executed is on disk


def test_another_sweep_or_a_bisection_is_refused_in_one_line(tmp_path: Path) -> None:
    from counterfact import find_culprits

    find_culprits(
        ["tool:a"],
        Counting(),
        reference="yes",
        executor="local",
        out=tmp_path / "b",
        runner_version="v1",
    )
    with pytest.raises(RunDirectoryError) as caught:
        sweep(Counting(), tmp_path / "b", runner_version="v1")
    msg = str(caught.value)
    assert "holds the bisection 'find-culprits', not the sweep 'compare-arms'" in msg
    assert "\n" not in msg and "--out NEW_DIR" in msg
    sweep(Counting(), tmp_path / "s", runner_version="v1")
    with pytest.raises(
        RunDirectoryError, match="holds the sweep 'compare-arms', not the sweep 'other'"
    ):
        sweep(Counting(), tmp_path / "s", runner_version="v1", name="other")


def test_fresh_with_a_cache_reruns_only_the_changed_arm(tmp_path: Path) -> None:
    arms = [{"id": "base"}, *({"id": f"a{i}", "facets": {"answer": f"v{i}"}} for i in range(4))]
    first = Counting()
    sweep(first, tmp_path / "o", arms=arms, samples=4, runner_version="v1")
    assert len(first.calls) == 20
    changed = [*arms[:-1], {"id": "a3", "facets": {"answer": "changed"}}]
    with pytest.raises(
        ResumeConflictError, match=r"arms\[a3\]\.facets\.answer: \"v3\" → \"changed\""
    ):
        sweep(Counting(), tmp_path / "o", arms=changed, samples=4, runner_version="v1")
    again = Counting()
    result = sweep(
        again,
        tmp_path / "o",
        arms=changed,
        samples=4,
        runner_version="v1",
        fresh=True,
        cache_dir=tmp_path / "cache",
    )
    # the 16 unchanged runs came from the moved-aside directory through the cache
    assert sorted({arm for _, arm, _ in again.calls}) == ["a3"] and len(again.calls) == 4
    assert result.summary.execution.runs_from_cache == 16  # type: ignore[attr-defined]


def test_an_old_bisection_directory_without_kind_refuses_a_sweep(tmp_path: Path) -> None:
    from counterfact import find_culprits

    find_culprits(["tool:a"], Counting(), reference="yes", executor="local", out=tmp_path / "b")
    meaning = tmp_path / "b" / "sweep.json"
    legacy = {k: v for k, v in json.loads(meaning.read_text()).items() if k not in ("kind", "name")}
    meaning.write_text(json.dumps(legacy))  # as written before kind and name were recorded
    with pytest.raises(RunDirectoryError, match="holds the bisection 'find-culprits'"):
        sweep(Counting(), tmp_path / "b")


def test_fresh_cache_adopts_nothing_from_another_runner(tmp_path: Path) -> None:
    sweep(Counting(), tmp_path / "o", runner_version="v1")
    again = Counting()
    sweep(again, tmp_path / "o", runner_version="v2", fresh=True, cache_dir=tmp_path / "c")
    assert len(again.calls) == 6  # nothing reused: the runner changed
    assert len(list((tmp_path / "c").rglob("*.json"))) == 6  # only v2's own runs were cached
