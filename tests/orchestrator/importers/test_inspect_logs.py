"""``counterfact import inspect`` (issue 21 item 4): Inspect AI logs judged here.

The logs are written in the test by ``inspect_ai.eval`` itself, with the ``mockllm/model``
provider and a solver that sets each output (seeded by sample and epoch), scored by Inspect's
own ``includes()`` scorer.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import Generate, TaskState, solver

from counterfact import load_runs

from ...helpers import invoke


def _dataset(n: int = 10) -> list[Sample]:
    return [Sample(id=f"q{i}", input=f"What is {i} plus {i}?", target=str(2 * i)) for i in range(n)]


def _answering(wrong_rate: float):  # type: ignore[no-untyped-def]
    @solver
    def answer():  # type: ignore[no-untyped-def]
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            rng = random.Random(f"{state.sample_id}/{state.epoch}/{wrong_rate}")
            right = state.target.text
            wrong = rng.random() < wrong_rate
            state.output.completion = "I am not sure." if wrong else f"The answer is {right}."
            return state

        return solve

    return answer()


@task
def good() -> Task:
    return Task(dataset=_dataset(), solver=_answering(0.1), scorer=includes(), epochs=5)


@task
def bad() -> Task:
    return Task(dataset=_dataset(), solver=_answering(0.6), scorer=includes(), epochs=5)


@task
def short() -> Task:
    return Task(dataset=_dataset(9), solver=_answering(0.1), scorer=includes(), epochs=5)


@task
def fewer_epochs() -> Task:
    return Task(dataset=_dataset(), solver=_answering(0.1), scorer=includes(), epochs=3)


def _good_vs_bad(logs: dict[str, Path], out: Path, *extra: str) -> tuple[int, str, str]:
    """``counterfact import inspect`` of the good and the bad task, good as the baseline."""
    return invoke(
        "import",
        "inspect",
        str(logs["good"]),
        str(logs["bad"]),
        "--baseline",
        "good",
        "--out",
        str(out),
        *extra,
    )


def test_two_logs_import_into_a_judged_run_directory(logs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "judged"
    code, stdout, err = _good_vs_bad(logs, out)
    assert code == 0, err
    summary = json.loads((out / "summary.json").read_text())
    (pooled,) = summary["pooled"]
    assert pooled["arm"] == "bad" and pooled["secondary_reading"] == "significant"
    assert pooled["effect"]["diff"] > 0.3
    rows = [json.loads(x) for x in (out / "verdicts.jsonl").read_text().splitlines()]
    assert {r["scenario"] for r in rows} == {f"q{i}" for i in range(10)}
    assert all(r["samples"] == 5 for r in rows)  # epochs are the seeds
    assert all(r["application"]["applied"] for r in rows if not r["is_baseline"])
    assert (out / "report.html").exists()
    assert stdout.splitlines()[1].startswith("  bad: confirmed (significant)")  # arm level first
    runs = load_runs(out)
    assert len(runs) == 100
    # Each run flipped exactly when Inspect scored it incorrect.
    assert set(runs.loc[runs["flipped"], "output"].str.split(":").str[0]) == {"incorrect"}


def test_arms_can_be_named_and_judged_by_a_comparator(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    code, stdout, err = invoke(
        "import",
        "inspect",
        "--arm",
        f"before={logs['good']}",
        "--arm",
        f"after={logs['bad']}",
        "--baseline",
        "before",
        "--out",
        str(tmp_path / "o"),
        "--comparator",
        "contains",
    )
    assert code == 0, err
    assert "after: confirmed (significant)" in stdout


@pytest.mark.parametrize(
    ("other", "message"),
    [
        ("short", r"'short' lacks q9"),
        ("fewer_epochs", r"sample 'q0' has epochs \[1, 2, 3, 4, 5\] in 'good' but \[1, 2, 3\]"),
    ],
)
def test_logs_that_do_not_pair_are_refused_with_the_difference(
    logs: dict[str, Path], tmp_path: Path, other: str, message: str
) -> None:
    code, _, err = invoke(
        "import",
        "inspect",
        str(logs["good"]),
        str(logs[other]),
        "--baseline",
        "good",
        "--out",
        str(tmp_path / "o"),
    )
    assert code == 2
    assert err.startswith("error: LOG: ")
    assert re.search(message, err), err
    assert not (tmp_path / "o").exists()  # refused before anything was written


def test_a_file_that_is_not_a_log_is_one_line(tmp_path: Path, logs: dict[str, Path]) -> None:
    junk = tmp_path / "junk.json"
    junk.write_text("{}")
    code, _, err = invoke(
        "import",
        "inspect",
        str(logs["good"]),
        str(junk),
        "--baseline",
        "good",
        "--out",
        str(tmp_path / "o"),
    )
    assert code == 2 and "not an Inspect AI log" in err and len(err.strip().splitlines()) == 1


@task
def other_targets() -> Task:
    data = [
        Sample(id=f"q{i}", input=f"What is {i} plus {i}?", target=str(3 * i)) for i in range(10)
    ]
    return Task(dataset=data, solver=_answering(0.1), scorer=includes(), epochs=5)


def test_logs_of_another_dataset_with_the_same_ids_are_refused(tmp_path: Path) -> None:
    (log,) = eval([other_targets()], model="mockllm/model", log_dir=str(tmp_path), display="none")
    good_log = eval([good()], model="mockllm/model", log_dir=str(tmp_path / "g"), display="none")
    code, _, err = invoke(
        "import",
        "inspect",
        good_log[0].location,
        log.location,
        "--baseline",
        "good",
        "--out",
        str(tmp_path / "o"),
    )
    assert code == 2 and "sample 'q1' has another target in 'other_targets'" in err


def test_correct_values_match_by_meaning() -> None:
    from counterfact.orchestrator.importers.judge import _is_correct

    assert _is_correct(True, ("true",)) and _is_correct(1.0, ("1",)) and _is_correct("C", ("c",))
    assert not _is_correct("I", ("C", 1, True)) and not _is_correct(0.5, ("C", 1, True))


def test_score_and_correct_choose_what_counts_as_correct(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    # includes() scores C or I; declaring I the correct value turns the judgement around: the
    # good task's runs now flip where they scored C, and the bad task flips less than it.
    code, _, err = _good_vs_bad(logs, tmp_path / "o", "--score", "includes", "--correct", "I")
    assert code == 0, err
    runs = load_runs(tmp_path / "o")
    flipped = runs.groupby("arm")["flipped"].mean()
    assert flipped["good"] > 0.8 and flipped["bad"] < flipped["good"]
    code, _, err = _good_vs_bad(logs, tmp_path / "p", "--score", "no_such_scorer")
    assert code == 2 and "no_such_scorer" in err and len(err.strip().splitlines()) == 1


@task
def shared(wrong_rate: float = 0.1) -> Task:
    return Task(dataset=_dataset(), solver=_answering(wrong_rate), scorer=includes(), epochs=5)


@pytest.fixture(scope="module")
def one_task(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two logs of one task, as the how-to makes them: ``--log-dir logs/before`` and
    ``logs/after`` (here the task's own argument is what changed, not the model).
    """
    folder = tmp_path_factory.mktemp("one-task")
    found = []
    for where, rate in (("before", 0.1), ("after", 0.6)):
        (log,) = eval(
            shared(wrong_rate=rate),
            model="mockllm/model",
            log_dir=str(folder / "logs" / where),
            display="none",
        )
        found.append(Path(log.location))
    return found[0], found[1]


def test_two_logs_of_one_task_are_named_by_their_folders(
    one_task: tuple[Path, Path], tmp_path: Path
) -> None:
    # docs/how-to/inspect.md's first example, as written: it was refused ("two logs are both
    # named 'shared'"); the logs are now the arms 'before' and 'after'.
    before, after = one_task
    out = tmp_path / "compare"
    code, stdout, err = invoke(
        "import", "inspect", str(before), str(after), "--baseline", "shared", "--out", str(out)
    )
    assert code == 0, err
    lines = stdout.splitlines()
    assert lines[0] == f"note: arm 'before' is {before} (task 'shared', named by its folder)"
    assert lines[1] == f"note: arm 'after' is {after} (task 'shared', named by its folder)"
    assert lines[2] == "note: baseline 'before': the first log of task 'shared'"
    assert lines[4].startswith("  after: confirmed (significant)")
    arms = [json.loads(x) for x in (out / "arms.jsonl").read_text().splitlines()]
    assert [a["arm"] for a in arms] == ["after"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["config"]["baseline"] == "before"


def test_without_baseline_the_first_log_is_the_baseline(
    one_task: tuple[Path, Path], tmp_path: Path
) -> None:
    before, after = one_task
    code, stdout, err = invoke("import", "inspect", str(after), str(before), "--out", str(tmp_path))
    assert code == 0, err
    assert "note: baseline 'after': the first log" in stdout.splitlines()
    # the better log compared with the worse one: it flips fewer runs, so nothing is confirmed
    assert "  before: not-confirmed" in stdout
    code, _, err = invoke(
        "import", "inspect", str(before), str(after), "--baseline", "middle", "--out", str(tmp_path)
    )
    assert code == 2 and "no log is named 'middle'; the arms are before, after" in err


def test_logs_of_one_task_in_one_folder_are_named_by_file(
    one_task: tuple[Path, Path], tmp_path: Path
) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    copies = [folder / p.name for p in one_task]
    for source, copy in zip(one_task, copies, strict=True):
        copy.write_bytes(source.read_bytes())
    code, stdout, err = invoke(
        "import", "inspect", *map(str, copies), "--out", str(tmp_path / "o"), "--no-report"
    )
    assert code == 0, err
    assert (
        f"note: arm {copies[1].stem!r} is {copies[1]} (task 'shared', named by its file name)"
        in (stdout)
    )
    # the same log given twice cannot be told apart (--arm NAME=LOG names each)
    code, _, err = invoke(
        "import", "inspect", str(copies[0]), str(copies[0]), "--out", str(tmp_path / "p")
    )
    assert code == 2 and f"two logs are both named {copies[0].stem!r}; name them with --arm" in err
