"""Inspect AI's side of scripts/bench_io.py: the same requests, ``q0 .. q<n-1>``."""

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


@task
def standin(n: int = 200) -> Task:
    return Task(
        dataset=[Sample(input=f"q{i}", target="Paris") for i in range(n)],
        solver=generate(),
        scorer=includes(),
    )
