"""Every default a user can see, defined once: the schema, the Python API, the engine and the
docs read them from here.
"""

from __future__ import annotations

from typing import Final

SAMPLES = 3
"""Seeded reruns per (scenario, arm) (rule 1: at least 2)."""
SIMILARITY_THRESHOLD = 0.8
"""The similarity comparator flips an output iff its similarity is below this (strict)."""
MAX_PROBES = 24
"""Bisection's probe budget, the baseline probe included (rule 10)."""
MAX_CULPRITS = 4
"""Independent culprit sets bisection searches for at most (rule 10)."""
MAX_IN_FLIGHT = 4096
"""Ray executor: runs submitted and not yet finished, at most. Room for full batches of an
instant runner (256 runs, 3 tasks per worker) on 5 workers; 256 held such a sweep's tasks to ~30
runs each on 2 CPUs, a third of its speed."""
CONCURRENCY_ASYNC = 100
"""Runs in flight at once across the sweep for an ``async def`` runner when ``executor.concurrency``
is not set (a sync runner without it keeps one run per CPU)."""
MAX_RATE_LIMIT_WAIT_S = 900.0
"""Seconds one run may wait on rate limits in all before it is recorded as failed."""
LOOP_BLOCKED_S = 600.0
"""In-process: how long a runner may block the event loop it shares (no ``await`` turning it)
before that loop and its runs are given up, when ``executor.timeout_s`` is not set (when it is,
``timeout_s``)."""
INFRA_RETRIES = 2
"""Ray executor: resubmissions of work lost to a dead worker or node."""
JOIN_TIMEOUT_S = 20.0
"""Ray executor, joining a cluster: seconds ``ray.init`` may take once the cluster's port
answered (a port that accepts TCP but is not a Ray cluster, or one that refuses joins without a
token, made it retry for many minutes)."""
COST_KEY = "loops"
"""The cost key rule 11 judges."""
OUTPUT_DIR = "runs"
"""Run directories go to ``<output_dir>/<name>/``."""
NUMERIC_TOLERANCE = 0.0
"""The numeric comparator flips an output iff its number differs by more than this."""
COMPARATOR = "similarity"
"""The comparator kind when none is named."""
SIMILARITY = "text"
"""The similarity kind when none is named."""
EXECUTOR = "ray"
"""The executor kind when none is named, for a CPU-bound sweep (an API-bound one without an address
runs in-process: :mod:`counterfact.orchestrator.config.executor_choice`)."""
ALPHA = 0.05
"""Significance level of the statistical verdicts."""
ADJUST = "holm"
"""Multiplicity adjustment over the family: holm, bh, by or none."""
FAMILY = "sweep"
"""The family p-values are adjusted over: sweep (every scenario and challenger) or scenario."""
PAIRING = "seed"
"""seed: paired exact McNemar on seed pairs; none: unpaired Fisher exact test."""
ALTERNATIVE: Final = "greater"
"""The direction every test looks in: greater (the arm flips more often than the baseline: a
break), less (a fix) or two-sided. ``Final``, so mypy reads it as the literal where an
``Alternative`` is expected."""

MAX_CONFIG_NODES = 100_000
"""Values (mappings, lists, scalars) a sweep file may hold once YAML aliases are expanded; an
alias bomb is refused at this count, in well under a second."""

MAX_CONFIG_DEPTH = 64
"""How deeply a sweep file's values may nest."""

MAX_SAMPLES = 1_000_000
"""The most seeds per (scenario, arm): ``samples`` and ``sequential.max_samples``."""
FRESH_SEED_STRIDE = 10_000_000
"""``placebo: fresh`` arm k (counted from 1) gives its runner seeds ``k * FRESH_SEED_STRIDE + i``:
past any seed index a sweep can use (``MAX_SAMPLES``), and below 2**32 for the first 400 such
arms, so numpy and ``random`` accept them."""

MAX_ARMS = 100_000
"""The most arms a sweep may declare or expand (``grid`` combinations included)."""

MAX_PLAN_RUNS = 50_000_000
"""The most runs a sweep may plan: ``samples`` (or ``sequential.max_samples``) x arms x
scenarios."""
