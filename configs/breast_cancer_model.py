"""A real model nobody here wrote: scikit-learn's gradient boosting on the breast cancer data.

The Wisconsin diagnostic breast cancer data ships with scikit-learn (no download). Each run
trains ``HistGradientBoostingClassifier`` with early stopping, seeded by the run's seed (the
seed picks the early-stopping validation split, so the number of boosting iterations varies),
on a fixed 75/25 stratified split, and predicts one held-out test case.

Suspects are the ten **feature groups** (radius, texture, ... each with its mean, standard error
and worst value): ablating ``group:<name>`` drops those three columns before training. With every
group removed there is nothing to learn from, and the model predicts the training set's most
frequent class (a ``DummyClassifier``).

Reported per run: ``output`` the predicted diagnosis (``malignant`` / ``benign``), ``manifest``
the groups used, and ``cost``: ``loops`` (boosting iterations before early stopping) and
``fit_s`` (fit wall time, seconds).
"""

from __future__ import annotations

import time
from functools import cache
from typing import Any

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.dummy import DummyClassifier
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import train_test_split

from counterfact import RunContext, RunResult, apply_ablations


def group_of(feature: str) -> str:
    """'worst concave points' -> 'concave points'."""
    return feature.removeprefix("mean ").removeprefix("worst ").removesuffix(" error")


@cache
def data() -> tuple[Any, Any, Any, Any, list[str]]:
    ds = load_breast_cancer()
    x_train, x_test, y_train, y_test = train_test_split(
        ds.data, ds.target, test_size=0.25, random_state=0, stratify=ds.target
    )
    return x_train, x_test, y_train, y_test, list(ds.feature_names)


GROUPS = sorted({group_of(f) for f in load_breast_cancer().feature_names})


def run(ctx: RunContext) -> RunResult:
    x_train, x_test, y_train, _, names = data()
    kept = apply_ablations(GROUPS, ctx.arm, key=lambda g: f"group:{g}")
    cols = [i for i, name in enumerate(names) if group_of(name) in kept]
    case = int(ctx.scenario.inputs["test_index"])
    start = time.perf_counter()
    model: Any
    if cols:
        model = HistGradientBoostingClassifier(
            early_stopping=True, validation_fraction=0.2, max_iter=300, random_state=ctx.seed
        )
        model.fit(x_train[:, cols], y_train)
        loops = int(model.n_iter_)
    else:
        model = DummyClassifier(strategy="most_frequent").fit(np.zeros((len(y_train), 1)), y_train)
        loops = 0
    fit_s = time.perf_counter() - start
    features = x_test[case : case + 1, cols] if cols else np.zeros((1, 1))
    label = int(model.predict(features)[0])
    return RunResult(
        output=("malignant", "benign")[label],
        manifest={"groups": kept},
        cost={"loops": loops, "fit_s": round(fit_s, 4)},
    )
